import { startTestService, type TestService } from '../../support/service';
import { graphql, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const CREATE_ORDER = `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { orderReference } }`;
const ORDERS = `query ($filter: OrderFilterInput) { orders(first: 50, filter: $filter) { totalCount edges { node { orderReference statusId } } } }`;
const LINKS = `query ($filter: PaymentLinkFilterInput) { paymentLinks(first: 5, filter: $filter) { totalCount } }`;

describe('GraphQL list filters are bounded and checked before any SQL', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let env: number;
  let gql: (query: string, variables?: Record<string, unknown>) => Promise<any>;
  const sql = (text: string, params: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(text, params);
  const paid: string[] = [];
  const open: string[] = [];

  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
    env = (await t.service.runtime.ctx.services.auth.authenticate(m.keys.test.privateKey)).environmentId;
    gql = async (query, variables = {}) => (await graphql(t.baseUrl, query, variables, { 'api-key': m.keys.test.privateKey })).body;
    for (let i = 0; i < 4; i += 1) {
      const reference = `LF-${process.pid}-${i}`;
      const res = await gql(CREATE_ORDER, {
        input: {
          customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `lf${i}@example.test` },
          amount: '10.00',
          currency: 'NGN',
          reference,
          redirectUrl: 'https://m.test/back',
        },
      });
      expect(res.errors).toBeUndefined();
      if (i % 2 === 0) {
        await sql(`update checkout_order set status_id = 5, payment_method = 'C' where environment_id = ? and reference = ?`, [env, reference]);
        paid.push(reference);
      } else open.push(reference);
    }
  });
  afterAll(async () => {
    await t.close();
  });

  const refused = (body: any) => {
    expect(body.data ?? null).toBeNull();
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    return body.errors[0].message as string;
  };

  it('refuses 3000 status ids at once, saying how many a filter takes', async () => {
    const statusIds = Array.from({ length: 3000 }, (_, i) => (i % 5) + 1);
    expect(refused(await gql(ORDERS, { filter: { statusIds } }))).toBe('The statusIds filter takes at most 20 values (got 3000).');
    // Counted as given: 21 copies of one id are refused too, 20 are taken.
    expect(refused(await gql(ORDERS, { filter: { statusIds: Array(21).fill(5) } }))).toBe('The statusIds filter takes at most 20 values (got 21).');
    expect((await gql(ORDERS, { filter: { statusIds: Array(20).fill(5) } })).errors).toBeUndefined();
  });

  it('refuses a status id above 32767 as bad input, not as an internal error', async () => {
    const body = await gql(ORDERS, { filter: { statusIds: [40000] } });
    expect(refused(body)).toBe('The statusIds filter holds the unknown id 40000; known ids are 1, 2, 3, 4, 5, 6, 7.');
    // In the document itself as in a variable.
    const literal = await gql('{ orders(first: 1, filter: { statusIds: [5, 2147483647] }) { totalCount } }');
    expect(refused(literal)).toBe('The statusIds filter holds the unknown id 2147483647; known ids are 1, 2, 3, 4, 5, 6, 7.');
  });

  it('refuses unknown status ids and null inside the list', async () => {
    expect(refused(await gql(ORDERS, { filter: { statusIds: [8] } }))).toBe('The statusIds filter holds the unknown id 8; known ids are 1, 2, 3, 4, 5, 6, 7.');
    // Authorized (6) and Voided (7) are known: an empty page, not a refusal.
    const known = await gql(ORDERS, { filter: { statusIds: [6, 7], search: 'LF-' } });
    expect(known.errors).toBeUndefined();
    expect(known.data.orders.totalCount).toBe(0);
    // The schema's list holds no nulls: GraphQL itself refuses one, with the same code.
    expect(refused(await gql(ORDERS, { filter: { statusIds: [5, null] } }))).toMatch(/statusIds/);
  });

  it('collapses duplicate ids: each matching order once, counted once', async () => {
    const res = await gql(ORDERS, { filter: { statusIds: [5, 1, 5, 1, 5], search: 'LF-' } });
    expect(res.errors).toBeUndefined();
    expect(res.data.orders.totalCount).toBe(4);
    expect(res.data.orders.edges.map((e: any) => e.node.orderReference).sort()).toEqual([...paid, ...open].sort());
    const onlyPaid = await gql(ORDERS, { filter: { statusIds: [5, 5], search: 'LF-' } });
    expect(onlyPaid.data.orders.edges.map((e: any) => e.node.orderReference).sort()).toEqual([...paid].sort());
  });

  it('takes only supported currencies, in any case', async () => {
    expect((await gql(ORDERS, { filter: { currency: 'ngn', search: 'LF-' } })).data.orders.totalCount).toBe(4);
    expect(refused(await gql(ORDERS, { filter: { currency: 'XXX' } }))).toBe(
      'The currency filter must be a currency code the gateway supports (such as NGN); got "XXX".',
    );
    expect(refused(await gql(LINKS, { filter: { currency: 'N\u00c9N' } }))).toMatch(/^The currency filter must be a currency code/);
  });

  it('takes search text up to 320 characters', async () => {
    const exact = `${'a'.repeat(300)}@example.test`.padEnd(320, 'x');
    expect((await gql(ORDERS, { filter: { search: exact } })).data.orders.totalCount).toBe(0);
    expect(refused(await gql(ORDERS, { filter: { search: `${exact}x` } }))).toBe('The search filter takes at most 320 characters (got 321).');
    expect(refused(await gql(LINKS, { filter: { search: 'x'.repeat(100_000) } }))).toBe('The search filter takes at most 320 characters (got 100000).');
  });

  it('refuses a link id out of range and a payment method no order shows', async () => {
    expect(refused(await gql(ORDERS, { filter: { paymentLinkId: 0 } }))).toBe('The paymentLinkId filter must be a whole number from 1 to 2147483647.');
    expect(refused(await gql(ORDERS, { filter: { paymentLinkId: -5 } }))).toBe('The paymentLinkId filter must be a whole number from 1 to 2147483647.');
    expect(refused(await gql(ORDERS, { filter: { paymentMethod: 'Cheque' } }))).toBe('The paymentMethod filter must be one of "", "Card Payment", "PayPal".');
    const card = await gql(ORDERS, { filter: { paymentMethod: 'card payment', search: 'LF-' } });
    expect(card.data.orders.edges.map((e: any) => e.node.orderReference).sort()).toEqual([...paid].sort());
  });

  it('answers a REST list with an id out of range in the REST validation shape', async () => {
    const res = await request(t.baseUrl, 'GET', '/checkout/links/all?id=0', { apiKey: m.keys.test.privateKey });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The id filter must be a whole number from 1 to 2147483647.' });
  });
});
