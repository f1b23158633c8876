import { startTestService, type TestService } from '../../support/service';
import { graphql } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { Tenant } from '../../../src/merchants/tenant';

const CREATE_ORDER = `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { orderReference } }`;
const SUMMARY = `query ($from: DateTimeISO!, $to: DateTimeISO!) { dashboardSummary(from: $from, to: $to) {
  from to byStatus { statusId status currency count amount fees } successRate
  byMethod { paymentMethod currency count successful failed successRate volume }
  daily { date currency count successful volume } } }`;

describe('the orders service works out the dashboard figures', () => {
  let t: TestService;
  let tenant: Tenant;
  let gql: (query: string, variables?: Record<string, unknown>) => Promise<any>;
  const from = new Date('2026-05-01T00:00:00Z');
  const to = new Date('2026-05-03T00:00:00Z');

  beforeAll(async () => {
    t = await startTestService();
    const m = await createTestMerchant(t);
    tenant = await t.service.runtime.ctx.services.auth.authenticate(m.keys.test.privateKey);
    gql = async (query, variables = {}) => (await graphql(t.baseUrl, query, variables, { 'api-key': m.keys.test.privateKey })).body;
    const orders: Array<[string, number, string | null, string]> = [
      ['12.50', 5, 'C', '2026-05-01T10:00:00Z'],
      ['0.75', 4, 'C', '2026-05-02T11:00:00Z'],
      ['3.00', 1, null, '2026-05-02T12:00:00Z'],
    ];
    for (const [i, [amount, statusId, method, at]] of orders.entries()) {
      const reference = `OS-${process.pid}-${i}`;
      const res = await gql(CREATE_ORDER, {
        input: {
          customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
          amount,
          currency: 'NGN',
          reference,
          redirectUrl: 'https://m.test/back',
        },
      });
      expect(res.errors).toBeUndefined();
      await t.service.runtime.ctx.orm.em
        .getConnection()
        .execute(`update checkout_order set status_id = ?, payment_method = ?, created_at = ? where environment_id = ? and reference = ?`, [
          statusId,
          method,
          at,
          tenant.environmentId,
          reference,
        ]);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('OrderService.summary answers the figures themselves (by status, method and day), the ones the GraphQL query serves', async () => {
    const figures = await t.service.runtime.ctx.services.orders.summary(tenant, from, to);
    expect(figures).toMatchObject({
      from,
      to,
      successRate: 0.5,
      byStatus: [
        { statusId: 1, status: 'Initiated', currency: 'NGN', count: 1, amount: '3.00' },
        { statusId: 4, status: 'Failed', currency: 'NGN', count: 1, amount: '0.75' },
        { statusId: 5, status: 'Successful', currency: 'NGN', count: 1, amount: '12.50' },
      ],
      byMethod: [
        { paymentMethod: '', currency: 'NGN', count: 1, successful: 0, failed: 0, successRate: 0, volume: '0.00' },
        { paymentMethod: 'Card Payment', currency: 'NGN', count: 2, successful: 1, failed: 1, successRate: 0.5, volume: '12.50' },
      ],
      daily: [
        { date: '2026-05-01', currency: 'NGN', count: 1, successful: 1, volume: '12.50' },
        { date: '2026-05-02', currency: 'NGN', count: 2, successful: 0, volume: '0.00' },
      ],
    });
    const res = await gql(SUMMARY, { from: from.toISOString(), to: to.toISOString() });
    expect(res.errors).toBeUndefined();
    expect(res.data.dashboardSummary).toEqual({ ...figures, from: from.toISOString(), to: to.toISOString() });
  });
});
