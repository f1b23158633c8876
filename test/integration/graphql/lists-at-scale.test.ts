import { startTestService, type TestService } from '../../support/service';
import { graphql, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { EXACT_COUNT_BOUND } from '../../../src/db/sql';
import { paymentLinkView } from '../../../src/links/payment-link.view';

const CREATE_ORDER = `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { orderReference } }`;
const SUMMARY = `query ($from: DateTimeISO!, $to: DateTimeISO!) { dashboardSummary(from: $from, to: $to) {
  byStatus { statusId status currency count amount fees } successRate
  byMethod { paymentMethod currency count successful failed successRate volume }
  daily { date currency count successful volume } } }`;
const ORDERS = `query ($first: Int, $after: String, $filter: OrderFilterInput) { orders(first: $first, after: $after, filter: $filter) {
  totalCount totalCountIsEstimate pageInfo { hasNextPage endCursor } edges { node { orderReference statusId paymentMethod } } } }`;

describe('lists at scale', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let env: number;
  let gql: (query: string, variables?: Record<string, unknown>) => Promise<any>;
  const sql = (text: string, params: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(text, params);

  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
    env = (await t.service.runtime.ctx.services.auth.authenticate(m.keys.test.privateKey)).environmentId;
    gql = async (query, variables = {}) => (await graphql(t.baseUrl, query, variables, { 'api-key': m.keys.test.privateKey })).body;
  });
  afterAll(async () => {
    await t.close();
  });

  let n = 0;
  /** A real order through createOrder, then moved to the given state and UTC instant (as settlement and time would). */
  async function order(amount: string, currency: string, state: { statusId: number; method: string | null; at: string }): Promise<string> {
    const reference = `LS-${process.pid}-${++n}`;
    const res = await gql(CREATE_ORDER, {
      input: {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada${n % 3}@example.test` },
        amount,
        currency,
        reference,
        redirectUrl: 'https://m.test/back',
      },
    });
    expect(res.errors).toBeUndefined();
    await sql(`update checkout_order set status_id = ?, payment_method = ?, created_at = ? where environment_id = ? and reference = ?`, [
      state.statusId,
      state.method,
      state.at,
      env,
      reference,
    ]);
    return reference;
  }

  describe('dashboardSummary', () => {
    beforeAll(async () => {
      await order('0.10', 'NGN', { statusId: 5, method: 'C', at: '2026-03-01T10:00:00Z' });
      await order('0.20', 'NGN', { statusId: 5, method: 'C', at: '2026-03-01T23:59:59.999Z' });
      await order('1000.55', 'NGN', { statusId: 4, method: 'C', at: '2026-03-02T00:00:00Z' });
      await order('7.25', 'USD', { statusId: 5, method: 'PAYPAL', at: '2026-03-02T12:00:00Z' });
      await order('3.00', 'USD', { statusId: 4, method: 'PAYPAL', at: '2026-03-02T13:00:00Z' });
      await order('99.99', 'NGN', { statusId: 1, method: null, at: '2026-03-03T08:00:00Z' });
      await order('5.00', 'NGN', { statusId: 5, method: 'C', at: '2026-03-04T00:00:00Z' }); // outside [from, to)
    });

    const expected = {
      byStatus: [
        { statusId: 1, status: 'Initiated', currency: 'NGN', count: 1, amount: '99.99', fees: expect.any(String) },
        { statusId: 4, status: 'Failed', currency: 'NGN', count: 1, amount: '1000.55', fees: expect.any(String) },
        { statusId: 4, status: 'Failed', currency: 'USD', count: 1, amount: '3.00', fees: expect.any(String) },
        { statusId: 5, status: 'Successful', currency: 'NGN', count: 2, amount: '0.30', fees: expect.any(String) },
        { statusId: 5, status: 'Successful', currency: 'USD', count: 1, amount: '7.25', fees: expect.any(String) },
      ],
      successRate: 3 / 5,
      byMethod: [
        { paymentMethod: '', currency: 'NGN', count: 1, successful: 0, failed: 0, successRate: 0, volume: '0.00' },
        { paymentMethod: 'Card Payment', currency: 'NGN', count: 3, successful: 2, failed: 1, successRate: 2 / 3, volume: '0.30' },
        { paymentMethod: 'PayPal', currency: 'USD', count: 2, successful: 1, failed: 1, successRate: 0.5, volume: '7.25' },
      ],
      daily: [
        { date: '2026-03-01', currency: 'NGN', count: 2, successful: 2, volume: '0.30' },
        { date: '2026-03-02', currency: 'NGN', count: 1, successful: 0, volume: '0.00' },
        { date: '2026-03-02', currency: 'USD', count: 2, successful: 1, volume: '7.25' },
        { date: '2026-03-03', currency: 'NGN', count: 1, successful: 0, volume: '0.00' },
      ],
    };

    it('sums by status, by payment method and currency, and by UTC day and currency, exactly', async () => {
      const res = await gql(SUMMARY, { from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z' });
      expect(res.errors).toBeUndefined();
      expect(res.data.dashboardSummary).toEqual(expected);
    });

    it('answers the same for partial days at either end (read from the orders) and after the deltas are rolled up', async () => {
      const partial = await gql(SUMMARY, { from: '2026-03-01T05:00:00Z', to: '2026-03-03T09:00:00Z' });
      expect(partial.data.dashboardSummary).toEqual(expected);
      const narrower = await gql(SUMMARY, { from: '2026-03-01T12:00:00Z', to: '2026-03-02T12:30:00Z' });
      expect(narrower.data.dashboardSummary.daily).toEqual([
        { date: '2026-03-01', currency: 'NGN', count: 1, successful: 1, volume: '0.20' },
        { date: '2026-03-02', currency: 'NGN', count: 1, successful: 0, volume: '0.00' },
        { date: '2026-03-02', currency: 'USD', count: 1, successful: 1, volume: '7.25' },
      ]);
      await t.service.runtime.ctx.services.orders.lists.rollUp();
      expect((await sql(`select count(*)::int as n from order_summary_delta where environment_id = ?`, [env]))[0].n).toBe(0);
      const rolled = await gql(SUMMARY, { from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z' });
      expect(rolled.data.dashboardSummary).toEqual(expected);
    });

    it('agrees with a direct aggregate of the orders after status changes and a delete', async () => {
      await sql(`update checkout_order set status_id = 5 where environment_id = ? and status_id = 1`, [env]);
      await sql(`delete from checkout_order where environment_id = ? and amount = 3.00`, [env]);
      const res = await gql(SUMMARY, { from: '2026-03-01T00:00:00Z', to: '2026-03-04T00:00:00Z' });
      const direct = await sql(
        `select status_id, currency, count(*)::int as count, sum(amount)::text as amount from checkout_order
          where environment_id = ? and created_at >= '2026-03-01T00:00:00Z' and created_at < '2026-03-04T00:00:00Z' group by 1, 2 order by 1, 2`,
        [env],
      );
      expect(res.data.dashboardSummary.byStatus.map((r: any) => [r.statusId, r.currency, r.count, r.amount])).toEqual(
        direct.map((r: any) => [r.status_id, r.currency.trim(), r.count, Number(r.amount).toFixed(2)]),
      );
    });

    it('refuses an empty or reversed range as bad input, in the order service itself and so over GraphQL', async () => {
      const tenant = await t.service.runtime.ctx.services.auth.authenticate(m.keys.test.privateKey);
      const at = new Date('2026-03-02T00:00:00Z');
      for (const [from, to] of [
        [at, at],
        [at, new Date('2026-03-01T00:00:00Z')],
      ] as const) {
        await expect(t.service.runtime.ctx.services.orders.summary(tenant, from, to)).rejects.toMatchObject({
          kind: 'validation',
          message: 'from must be before to.',
        });
        const res = await gql(SUMMARY, { from: from.toISOString(), to: to.toISOString() });
        expect(res.data).toBeNull();
        expect(res.errors[0]).toMatchObject({ message: 'from must be before to.', extensions: { code: 'VAL400' } });
      }
    });
  });

  it('lists each order with exactly the values the order query answers', async () => {
    const FIELDS = `orderReference paymentReference productName amount totalAmountCharged statusId status paymentMethod paymentResponseCode
      paymentResponseMessage narration remarks currencyId currencyName paymentLinkId paymentLinkReference recurringPaymentId recurringPaymentReference
      fee feeRate subsidiaryFee customerFee dateCreated dateUpdated datePaymentConfirmed
      orderPayments { orderPaymentReference statusId } cardDetails { cardType }
      customer { customerId firstName lastName emailAddress countryShortName countryId globalStatusId globalStatus mobileNumber isBlacklisted reasonBlacklisted dateCreated dateUpdated }
      paymentLink { id reference name amount }`;
    const page = await gql(`{ orders(first: 10) { edges { node { ${FIELDS} } } } }`);
    expect(page.errors).toBeUndefined();
    expect(page.data.orders.edges.length).toBeGreaterThan(3);
    for (const { node } of page.data.orders.edges) {
      const one = await gql(`query ($r: String!) { order(reference: $r) { ${FIELDS} } }`, { r: node.orderReference });
      expect(node).toEqual(one.data.order);
    }
    // Only a few fields asked for: the same values.
    const lean = await gql(`{ orders(first: 10) { edges { node { orderReference amount status paymentMethod customer { emailAddress } } } } }`);
    expect(lean.data.orders.edges.map((e: any) => e.node)).toEqual(
      page.data.orders.edges.map(({ node }: any) => ({
        orderReference: node.orderReference,
        amount: node.amount,
        status: node.status,
        paymentMethod: node.paymentMethod,
        customer: { emailAddress: node.customer.emailAddress },
      })),
    );
  });

  it("shows an order's payment link in a list page with every value the paymentLink query answers, subscription terms included", async () => {
    // A merchant of its own: the links/all test below counts this merchant's links.
    const own = await createTestMerchant(t);
    const ownGql = async (query: string, variables: Record<string, unknown> = {}) =>
      (await graphql(t.baseUrl, query, variables, { 'api-key': own.keys.test.privateKey })).body;
    const LINK_FIELDS = `id name description reference isActive amount currency paymentLinkUrl paymentLinkCode paymentLinkType authOption captureMethod
      limit frequencyId numberOfPayments logo website mobile backgroundImage appEnvironmentId dateCreated dateUpdated`;
    const created = await ownGql(`mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { id } }`, {
      input: {
        name: 'Club',
        description: 'Weekly',
        paymentType: 'SUB',
        amount: '250',
        limit: 9,
        frequencyId: 2,
        numberOfPayments: 3,
        website: 'https://m.test',
      },
    });
    expect(created.errors).toBeUndefined();
    const id = created.data.createPaymentLink.id;
    const reference = `LS-LINK-${process.pid}`;
    const res = await ownGql(CREATE_ORDER, {
      input: {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'club@example.test' },
        amount: '250',
        currency: 'NGN',
        reference,
        redirectUrl: 'https://m.test/back',
        paymentLinkId: id,
      },
    });
    expect(res.errors).toBeUndefined();
    const link = await ownGql(`query ($id: Int!) { paymentLink(id: $id) { ${LINK_FIELDS} } }`, { id });
    expect(link.data.paymentLink).toMatchObject({ frequencyId: 2, numberOfPayments: 3 });
    const page = await ownGql(
      `query ($f: OrderFilterInput) { orders(first: 5, filter: $f) { edges { node { orderReference paymentLink { ${LINK_FIELDS} } } } } }`,
      {
        f: { paymentLinkId: id },
      },
    );
    expect(page.errors).toBeUndefined();
    expect(page.data.orders.edges).toEqual([{ node: { orderReference: reference, paymentLink: link.data.paymentLink } }]);
  });

  it('answers totalCount with an empty page: no rows at all, and a page after the last row', async () => {
    const own = await createTestMerchant(t);
    const ownGql = async (query: string, variables: Record<string, unknown> = {}) =>
      (await graphql(t.baseUrl, query, variables, { 'api-key': own.keys.test.privateKey })).body;
    const LISTS = `query ($after: String) { orders(first: 2, after: $after) { totalCount edges { cursor } pageInfo { hasNextPage endCursor } }
      paymentLinks(first: 2, after: $after) { totalCount edges { cursor } pageInfo { hasNextPage endCursor } } }`;
    const empty = (await ownGql(LISTS)).data;
    expect(empty.orders).toEqual({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    expect(empty.paymentLinks).toEqual({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
    for (const name of ['One', 'Two']) {
      const made = await ownGql(`mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { id } }`, {
        input: { name, description: name, paymentType: 'MC' },
      });
      expect(made.errors).toBeUndefined();
    }
    const first = await ownGql(`{ paymentLinks(first: 2) { totalCount edges { cursor } pageInfo { hasNextPage endCursor } } }`);
    expect(first.data.paymentLinks).toMatchObject({ totalCount: 2, pageInfo: { hasNextPage: false } });
    expect(first.data.paymentLinks.edges).toHaveLength(2);
    const after = await ownGql(`query ($after: String) { paymentLinks(first: 2, after: $after) { totalCount edges { cursor } } }`, {
      after: first.data.paymentLinks.pageInfo.endCursor,
    });
    expect(after.data.paymentLinks).toEqual({ totalCount: 2, edges: [] });
  });

  describe('orders', () => {
    let other: CreatedMerchant;
    let otherEnv: number;
    let list: (variables: Record<string, unknown>) => Promise<any>;
    beforeAll(async () => {
      other = await createTestMerchant(t);
      otherEnv = (await t.service.runtime.ctx.services.auth.authenticate(other.keys.test.privateKey)).environmentId;
      list = async (variables) => {
        const res = (await graphql(t.baseUrl, ORDERS, variables, { 'api-key': other.keys.test.privateKey })).body;
        expect(res.errors).toBeUndefined();
        return res.data.orders;
      };
      // Beyond the bound of exact counting: 1,200 orders written straight into the table.
      await sql(
        `insert into checkout_order (environment_id, reference, processor_reference, payment_reference, customer_email, amount, currency, total_charged_amount,
            status_id, narration, redirect_url, payment_method, created_at, updated_at, version)
         select ?::int, 'BULK-' || g, 'PGWLS' || ?::int || 'X' || g, 'PAYLS' || ?::int || 'X' || g, 'bulk' || (g % 7) || '@example.test', 10, 'NGN', 10,
                case when g % 4 = 0 then 4 when g % 4 = 1 then 5 when g % 4 = 2 then 1 else 2 end, 'bulk', 'https://m.test/back',
                case when g % 4 = 2 then null when g % 3 = 0 then 'PAYPAL' else 'C' end,
                timestamptz '2026-01-01T00:00:00Z' + (g / 3) * interval '1 second', now(), 1
           from generate_series(1, 1200) g`,
        [otherEnv, otherEnv, otherEnv],
      );
      await sql('analyze checkout_order');
    });

    it(`counts exactly up to ${EXACT_COUNT_BOUND} and says when totalCount is an estimate beyond`, async () => {
      const all = await list({ first: 1 });
      expect(all.totalCountIsEstimate).toBe(true);
      expect(all.totalCount).toBeGreaterThan(EXACT_COUNT_BOUND);
      const few = await list({ first: 1, filter: { search: 'bulk3@example.test' } });
      expect(few).toMatchObject({
        totalCount: (
          await sql(`select count(*)::int as n from checkout_order where environment_id = ? and customer_email = 'bulk3@example.test'`, [otherEnv])
        )[0].n,
        totalCountIsEstimate: false,
      });
    });

    it('filters by payment method as the order shows it, "" for no payment attempt yet', async () => {
      const count = async (where: string) =>
        (await sql(`select count(*)::int as n from checkout_order where environment_id = ? and ${where}`, [otherEnv]))[0].n;
      const paypal = await list({ first: 100, filter: { paymentMethod: 'PayPal', search: 'bulk1@example.test' } });
      expect(paypal.totalCount).toBe(await count(`payment_method = 'PAYPAL' and customer_email = 'bulk1@example.test'`));
      expect(paypal.edges.length).toBeGreaterThan(0);
      expect(paypal.edges.every((e: any) => e.node.paymentMethod === 'PayPal')).toBe(true);
      const none = await list({ first: 100, filter: { paymentMethod: '', search: 'bulk2@example.test' } });
      expect(none.totalCount).toBe(await count(`payment_method is null and customer_email = 'bulk2@example.test'`));
      expect(none.edges.every((e: any) => e.node.paymentMethod === '' && e.node.statusId === 1)).toBe(true);
      const card = await list({ first: 1, filter: { paymentMethod: 'Card Payment', statusIds: [5] } });
      expect(card.totalCount).toBe(await count(`payment_method = 'C' and status_id = 5`));
    });

    it('pages through several statuses newest first, exactly once each, as the table orders them', async () => {
      const expected = (
        await sql(`select reference from checkout_order where environment_id = ? and status_id in (1, 4) order by created_at desc, id desc`, [otherEnv])
      ).map((r: any) => r.reference);
      const seen: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page: any = await list({ first: 100, after, filter: { statusIds: [4, 1] } });
        seen.push(...page.edges.map((e: any) => e.node.orderReference));
        if (!page.pageInfo.hasNextPage) break;
        after = page.pageInfo.endCursor;
      }
      expect(seen).toEqual(expected);
    });
  });

  it('REST links/all follows edits of a link and answers links whose stored JSON text is missing with the same bytes', async () => {
    const own = await createTestMerchant(t);
    const ownGql = async (query: string, variables: Record<string, unknown> = {}) =>
      (await graphql(t.baseUrl, query, variables, { 'api-key': own.keys.test.privateKey })).body;
    const ownEnv = (await t.service.runtime.ctx.services.auth.authenticate(own.keys.test.privateKey)).environmentId;
    const ids: number[] = [];
    for (const name of ['First "one"', 'Second']) {
      const made = await ownGql(`mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { id } }`, {
        input: { name, description: 'd', paymentType: 'MC', amount: '12.50' },
      });
      expect(made.errors).toBeUndefined();
      ids.push(made.data.createPaymentLink.id);
    }
    const edited = await ownGql(`mutation ($id: Int!, $input: EditPaymentLinkInput!) { editPaymentLink(id: $id, input: $input) { id } }`, {
      id: ids[0],
      input: { name: 'Renamed \\ one', description: 'new', paymentType: 'SC', amount: '99' },
    });
    expect(edited.errors).toBeUndefined();
    await ownGql(`mutation ($id: Int!) { deactivatePaymentLink(id: $id) { id } }`, { id: ids[1] });
    const tenant = await t.service.runtime.ctx.services.auth.authenticate(own.keys.test.publicKey);
    const links = t.service.runtime.ctx.services.links;
    const expected = async () => JSON.stringify((await links.list(tenant)).map((l) => paymentLinkView(l, links.paymentLinkUrl(l), 'list')));
    const all = async () => (await fetch(`${t.baseUrl}/checkout/links/all`, { headers: { 'api-key': own.keys.test.publicKey } })).text();
    const stored = await all();
    expect(stored).toBe(await expected());
    expect(JSON.parse(stored).map((l: any) => [l.name, l.paymentType, l.isActive, l.amount])).toEqual([
      ['Second', 'Multiple Charge', false, 12.5],
      ['Renamed \\ one', 'Single Charge', true, 99],
    ]);
    // Every write kept the link's text on its row.
    const [kept] = await sql(`select count(*)::int as n from payment_link where environment_id = ? and list_json_tail is not null`, [ownEnv]);
    expect(kept.n).toBe(2);
    // As a row written with triggers off (a bulk load) would be: no stored text.
    await sql(`alter table payment_link disable trigger payment_link_list_json`);
    try {
      await sql(`update payment_link set list_json_head = null, list_json_body = null, list_json_tail = null where environment_id = ? and id = ?`, [
        ownEnv,
        ids[0],
      ]);
    } finally {
      await sql(`alter table payment_link enable trigger payment_link_list_json`);
    }
    expect(await all()).toBe(stored);
  });

  it('REST links/all answers the same bytes as the list view of each link serialised', async () => {
    const names = ['Plain', 'Quote " and \\ back', 'Ctrl \u0001 tab \t é ✓ 😀', '</script>'];
    for (let i = 0; i < 4; i += 1) {
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: {
          Name: names[i],
          Description: `d${i}\n`,
          PaymentType: ['MC', 'SC', 'MC', 'SUB'][i],
          Currency: 'NGN',
          AuthOption: 'AUTH',
          Amount: i === 0 ? undefined : [0, 12.5, 1000, 0.01][i],
          Limit: i === 2 ? 3 : undefined,
        },
      });
    }
    // One link created with microseconds and an amount of four places' worth of zeros.
    await sql(`update payment_link set date_created = date_created + interval '123 microseconds' where environment_id = ? and name = 'Plain'`, [env]);
    const tenant = await t.service.runtime.ctx.services.auth.authenticate(m.keys.test.publicKey);
    const links = t.service.runtime.ctx.services.links;
    const expectedText = JSON.stringify((await links.list(tenant)).map((l) => paymentLinkView(l, links.paymentLinkUrl(l), 'list')));
    const res = await fetch(`${t.baseUrl}/checkout/links/all`, { headers: { 'api-key': m.keys.test.publicKey } });
    const text = await res.text();
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = JSON.parse(text);
    expect(body).toHaveLength(4);
    expect(text).toBe(expectedText);
    expect(text).toBe(JSON.stringify(body));
    expect(Object.keys(body[0])).toEqual([
      'id',
      'name',
      'paymentType',
      'logo',
      'amount',
      'dateCreated',
      'reference',
      'createdBy',
      'creatorEmail',
      'isActive',
      'currency',
      'limit',
      'paymentLinkUrl',
      'appEnvironmentId',
      'paymentLinkType',
      'paymentLinkCode',
      'description',
    ]);
    expect(body.map((l: any) => l.amount)).toEqual([0.01, 1000, 12.5, null]);
    const one = await fetch(`${t.baseUrl}/checkout/links/all?id=${body[1].id}`, { headers: { 'api-key': m.keys.test.publicKey } });
    expect(await one.text()).toBe(JSON.stringify([body[1]]));
    expect((await fetch(`${t.baseUrl}/checkout/links/all?id=999999999`, { headers: { 'api-key': m.keys.test.publicKey } })).status).toBe(404);
  });
});
