import { getIntrospectionQuery, type IntrospectionOptions } from 'graphql';
import { startTestService, type TestService } from '../../support/service';
import { graphql, postEncrypted } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { dashboardSummaryOf } from '../../../src/orders/order-summary';
import { closedWithin, WsSession } from './ws-session';

const ORDER_FIELDS = `orderReference paymentReference productName totalAmountCharged statusId status paymentMethod paymentResponseCode currencyId currencyName
  fee feeRate subsidiaryFee customerFee paymentLinkId paymentLinkReference datePaymentConfirmed
  orderPayments { orderPaymentReference paymentOptionId paymentOption statusId responseCode }
  customer { firstName lastName emailAddress countryShortName countryId }
  cardDetails { cardFirstSixDigits cardLastFourDigits cardType status }
  paymentLink { id reference }`;
const FULL_PAGE = `orders(first: 100) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ${ORDER_FIELDS} } } }`;
const CREATE_ORDER = `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { orderReference } }`;
const STATUS_CHANGED = `subscription ($reference: String) { orderStatusChanged(reference: $reference) { reference statusId } }`;
const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };

/** `count` fragments, each spreading the previous one twice: 2^count selections once expanded. */
function fragmentBomb(count: number): string {
  let text = 'fragment F0 on Query { health }\n';
  for (let i = 1; i <= count; i++) text += `fragment F${i} on Query { ...F${i - 1} ...F${i - 1} }\n`;
  return `query Bomb { ...F${count} }\n${text}`;
}

/** An introspection document `levels` fields deep (not the standard query: it obeys the limits). */
const deepIntrospection = (levels: number) => `{ __schema { queryType { ${'ofType { '.repeat(levels - 3)}name${' }'.repeat(levels - 3)} } } }`;

const INTROSPECTION_OPTIONS: IntrospectionOptions[] = [
  {},
  { descriptions: false },
  { specifiedByUrl: true },
  { directiveIsRepeatable: true },
  { schemaDescription: true },
  { inputValueDeprecation: true },
  { oneOf: true },
  { descriptions: true, specifiedByUrl: true, directiveIsRepeatable: true, schemaDescription: true, inputValueDeprecation: true, oneOf: true },
];

describe('GraphQL guards over HTTP and WebSocket', () => {
  let t: TestService;
  let m: CreatedMerchant;
  const logLines: any[] = [];
  const sessions: WsSession[] = [];
  const open = async (apiKey?: string, on: TestService = t) => {
    const s = await WsSession.open(on.baseUrl, apiKey === undefined ? {} : { 'api-key': apiKey });
    sessions.push(s);
    return s;
  };
  const http = async (query: string, variables: Record<string, unknown> = {}, apiKey?: string, headers: Record<string, string> = {}) =>
    (await graphql(t.baseUrl, query, variables, { ...(apiKey ? { 'api-key': apiKey } : {}), ...headers })).body;
  let n = 0;
  const orderInput = () => ({
    customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
    amount: '1000.00',
    reference: `GRD-${process.pid}-${Date.now()}-${++n}`,
    description: 'Tickets',
    redirectUrl: 'https://m.test/back',
  });

  beforeAll(async () => {
    t = await startTestService(
      { MAX_SUBSCRIPTIONS_PER_SOCKET: '3' },
      { logger: { level: 'error', stream: { write: (line: string) => logLines.push(JSON.parse(line)) } } },
    );
    m = await createTestMerchant(t);
  });
  afterAll(async () => {
    for (const s of sessions) s.close();
    await t.close();
  });

  describe('the complexity check', () => {
    it('refuses a fragment bomb at once, before authentication, and keeps serving', async () => {
      const bomb = fragmentBomb(30);
      expect(Buffer.byteLength(bomb)).toBeLessThan(1300);
      const [refused, health] = await Promise.all([http(bomb), http('{ health }')]);
      expect(refused.errors).toEqual([
        expect.objectContaining({ message: "The query's estimated cost is 1073741824; the limit is 25000.", extensions: { code: 'QUERY_TOO_COMPLEX' } }),
      ]);
      expect(health.data).toEqual({ health: 'ok' });
      // Refused as invalid: HTTP 400, like any validation failure.
      expect((await graphql(t.baseUrl, bomb)).status).toBe(400);
    });

    it('refuses 80 aliased pages of orders, and costs pages by their first argument', async () => {
      const aliased = `{ ${Array.from({ length: 80 }, (_, i) => `o${i}: orders(first: 100) { edges { node { orderReference } } }`).join(' ')} }`;
      const res = await http(aliased, {}, m.keys.test.privateKey);
      expect(res.errors).toEqual([
        expect.objectContaining({ message: 'The query has 80 aliases; the limit is 30.', extensions: { code: 'QUERY_TOO_COMPLEX' } }),
      ]);
      // One full page of 100 orders fits; two do not; and neither does one whose page size comes from a variable, twice.
      expect((await http(`{ ${FULL_PAGE} }`, {}, m.keys.test.privateKey)).errors).toBeUndefined();
      const twoPages = await http(`{ a: ${FULL_PAGE} b: ${FULL_PAGE} }`, {}, m.keys.test.privateKey);
      expect(twoPages.errors[0]).toMatchObject({
        message: expect.stringMatching(/^The query's estimated cost is \d+; the limit is 25000\.$/),
        extensions: { code: 'QUERY_TOO_COMPLEX' },
      });
      const small = await http(
        `{ a: orders(first: 2) { edges { node { ${ORDER_FIELDS} } } } b: orders(first: 2) { edges { node { ${ORDER_FIELDS} } } } }`,
        {},
        m.keys.test.privateKey,
      );
      expect(small.errors).toBeUndefined();
    });

    it('refuses a document deeper than 12 levels, introspection included', async () => {
      expect((await http(deepIntrospection(12))).errors).toBeUndefined();
      expect((await http(deepIntrospection(13))).errors).toEqual([
        expect.objectContaining({ message: 'The query is 13 levels deep; the limit is 12.', extensions: { code: 'QUERY_TOO_COMPLEX' } }),
      ]);
    });

    it('accepts the introspection query of getIntrospectionQuery(), with its options', async () => {
      for (const options of INTROSPECTION_OPTIONS) {
        const res = await http(getIntrospectionQuery(options));
        expect(res.errors).toBeUndefined();
        expect(res.data.__schema.types.length).toBeGreaterThan(20);
      }
    });
  });

  describe('the same pipeline over WebSocket', () => {
    it('refuses a fragment bomb and too deep a document over WebSocket', async () => {
      const s = await open(m.keys.test.publicKey);
      s.subscribe('bomb', fragmentBomb(30));
      s.subscribe('deep', deepIntrospection(13));
      expect(await s.result('bomb')).toEqual({
        id: 'bomb',
        type: 'error',
        payload: [
          expect.objectContaining({ message: "The query's estimated cost is 1073741824; the limit is 25000.", extensions: { code: 'QUERY_TOO_COMPLEX' } }),
        ],
      });
      expect((await s.result('deep')).payload).toEqual([
        expect.objectContaining({ message: 'The query is 13 levels deep; the limit is 12.', extensions: { code: 'QUERY_TOO_COMPLEX' } }),
      ]);
      s.subscribe('aliases', `{ ${Array.from({ length: 31 }, (_, i) => `a${i}: health`).join(' ')} }`);
      expect((await s.result('aliases')).payload[0].extensions.code).toBe('QUERY_TOO_COMPLEX');
      // GraphQL's own validation answers as over HTTP.
      s.subscribe('unknown', '{ nope }');
      expect((await s.result('unknown')).payload[0]).toMatchObject({
        message: 'Cannot query field "nope" on type "Query".',
        extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
      });
      expect(s.isOpen).toBe(true);
    });

    it('accepts the introspection query of getIntrospectionQuery(), with its options, over WebSocket', async () => {
      const s = await open(m.keys.test.publicKey);
      for (let i = 0; i < INTROSPECTION_OPTIONS.length; i++) {
        s.subscribe(`i${i}`, getIntrospectionQuery(INTROSPECTION_OPTIONS[i]));
        const result = await s.result(`i${i}`);
        expect(result.type).toBe('next');
        expect(result.payload.errors).toBeUndefined();
        expect(result.payload.data.__schema.types.length).toBeGreaterThan(20);
      }
    });

    it('refuses NUL characters over WebSocket', async () => {
      const s = await open(m.keys.test.publicKey);
      s.subscribe('nul', 'mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { id } }', {
        input: { name: 'a\u0000b', description: 'x', paymentType: 'MC' },
      });
      expect((await s.result('nul')).payload).toEqual([
        expect.objectContaining({ message: 'The request contains a character that is not allowed (NUL).', extensions: { code: 'VAL400' } }),
      ]);
    });

    it('refuses half of a surrogate pair over WebSocket, as over HTTP', async () => {
      const s = await open(m.keys.test.privateKey);
      s.subscribe('half', 'mutation ($input: RefundOrderInput!) { refundOrder(input: $input) { id } }', {
        input: { reference: 'any', reason: 'x\ud800' },
      });
      expect((await s.result('half')).payload).toEqual([
        expect.objectContaining({ message: 'The request contains a character that is not allowed (an unpaired surrogate).', extensions: { code: 'VAL400' } }),
      ]);
    });

    it('an internal error is masked over HTTP and WebSocket, and logged with the request id', async () => {
      const { orm, services } = t.service.runtime.ctx;
      const summary = services.orders.summary;
      // A genuine database error from a resolver's query.
      services.orders.summary = async () => {
        await orm.em.getConnection().execute('select * from table_that_does_not_exist');
        return dashboardSummaryOf(new Date(0), new Date(1), []);
      };
      try {
        const QUERY = `query { dashboardSummary(from: "2020-01-01T00:00:00Z", to: "2021-01-01T00:00:00Z") { successRate } }`;
        const res = await http(QUERY, {}, m.keys.test.privateKey, { 'x-request-id': 'gql-internal-http-1' });
        // The request id is the client's clue for support (issue 13).
        expect(res.errors).toEqual([
          {
            message: 'An unexpected error occurred, please try again later.',
            locations: expect.anything(),
            path: ['dashboardSummary'],
            extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: 'gql-internal-http-1' },
          },
        ]);
        expect(JSON.stringify(res)).not.toMatch(/table_that_does_not_exist/);

        const s = await open(m.keys.test.privateKey);
        s.subscribe('fault', QUERY);
        const ws = await s.result('fault');
        expect(ws.payload.errors).toEqual([
          {
            message: 'An unexpected error occurred, please try again later.',
            locations: expect.anything(),
            path: ['dashboardSummary'],
            extensions: { code: 'INTERNAL_SERVER_ERROR', requestId: expect.any(String) },
          },
        ]);
        expect(JSON.stringify(ws)).not.toMatch(/table_that_does_not_exist/);

        const logged = logLines.filter((l) => l.msg === 'GraphQL operation failed with an internal error');
        expect(logged).toEqual([
          expect.objectContaining({
            reqId: 'gql-internal-http-1',
            err: expect.objectContaining({ message: expect.stringMatching(/table_that_does_not_exist/) }),
            path: ['dashboardSummary'],
          }),
          expect.objectContaining({
            reqId: expect.any(String),
            operationId: 'fault',
            err: expect.objectContaining({ message: expect.stringMatching(/table_that_does_not_exist/) }),
          }),
        ]);
        expect(logged[1].reqId).not.toBe('gql-internal-http-1');
        expect(ws.payload.errors[0].extensions.requestId).toBe(logged[1].reqId);
      } finally {
        services.orders.summary = summary;
      }
    });

    it('with introspection off, neither transport answers it', async () => {
      const closed = await startTestService({ GRAPHQL_INTROSPECTION: 'false' });
      try {
        const res = await graphql(closed.baseUrl, getIntrospectionQuery());
        expect(res.body.errors[0]).toMatchObject({
          message: 'GraphQL introspection is disabled on this server.',
          extensions: { code: 'INTROSPECTION_DISABLED' },
        });
        expect((await graphql(closed.baseUrl, '{ __typename health }')).body.data).toEqual({ __typename: 'Query', health: 'ok' });
        const s = await open(m.keys.test.publicKey, closed);
        s.subscribe('schema', '{ __schema { queryType { name } } }');
        s.subscribe('type', '{ __type(name: "Query") { name } }');
        expect((await s.result('schema')).payload[0]).toMatchObject({ extensions: { code: 'INTROSPECTION_DISABLED' } });
        expect((await s.result('type')).payload[0]).toMatchObject({ extensions: { code: 'INTROSPECTION_DISABLED' } });
      } finally {
        await closed.close();
      }
    });
  });

  describe('order data needs the private key', () => {
    it('order, orders and orderTimeline refuse a public key with FORBIDDEN, over HTTP and WebSocket', async () => {
      const input = orderInput();
      await http(CREATE_ORDER, { input }, m.keys.test.publicKey);
      const queries = {
        order: `query ($reference: String!) { order(reference: $reference) { orderReference customer { emailAddress } } }`,
        orders: `{ orders(first: 5) { edges { node { orderReference } } } }`,
        orderTimeline: `query ($reference: String!) { orderTimeline(reference: $reference) { event } }`,
      };
      const s = await open(m.keys.test.publicKey);
      for (const [name, query] of Object.entries(queries)) {
        const refused = await http(query, { reference: input.reference }, m.keys.test.publicKey);
        expect(refused.errors[0]).toMatchObject({ message: 'This operation requires the private key.', extensions: { code: 'FORBIDDEN' } });
        expect(refused.data).toBeNull();
        s.subscribe(name, query, { reference: input.reference });
        expect((await s.result(name)).payload.errors[0]).toMatchObject({ extensions: { code: 'FORBIDDEN' } });
        const allowed = await http(query, { reference: input.reference }, m.keys.test.privateKey);
        expect(allowed.errors).toBeUndefined();
      }
    });
  });

  describe('subscriptions per socket, and sockets of replaced keys', () => {
    it('a socket holds at most MAX_SUBSCRIPTIONS_PER_SOCKET subscriptions; beyond that a subscribe gets an error and the others go on', async () => {
      const merchant = await createTestMerchant(t);
      const input = orderInput();
      await http(CREATE_ORDER, { input }, merchant.keys.test.publicKey);
      const s = await open(merchant.keys.test.publicKey);
      const bus = t.service.runtime.ctx.services.orderStatusBus;
      const environmentId = (await t.service.runtime.ctx.services.auth.authenticate(merchant.keys.test.publicKey)).environmentId;
      for (const id of ['s1', 's2', 's3']) s.subscribe(id, STATUS_CHANGED, { reference: input.reference });
      await waitUntil(() => bus.subscriberCount(environmentId) === 3);
      s.subscribe('s4', STATUS_CHANGED, { reference: input.reference });
      expect(await s.result('s4')).toEqual({ id: 's4', type: 'error', payload: [expect.objectContaining({ extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' } })] });
      expect(s.isOpen).toBe(true);
      expect(bus.subscriberCount(environmentId)).toBe(3);

      // The three still receive the order's changes.
      await postEncrypted(t.baseUrl, '/checkout/order/pay', merchant.keys.test.publicKey, merchant.keys.test.encryptionKey, {
        reference: input.reference,
        paymentOption: 'C',
        country: 'NG',
        card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
      });
      for (const id of ['s1', 's2', 's3']) expect((await s.result(id)).payload.data.orderStatusChanged).toEqual({ reference: input.reference, statusId: 2 });

      // Completing one makes room for another.
      s.complete('s1');
      await waitUntil(() => bus.subscriberCount(environmentId) === 2);
      s.subscribe('s5', STATUS_CHANGED, { reference: input.reference });
      await waitUntil(() => bus.subscriberCount(environmentId) === 3);
      expect(s.messages.find((msg) => msg.id === 's5')).toBeUndefined();
    });

    it('rotating a key closes the sockets opened with it (4403), at once without a grace period', async () => {
      const merchant = await createTestMerchant(t);
      const oldPublic = await open(merchant.keys.test.publicKey);
      const privateSocket = await open(merchant.keys.test.privateKey);
      const otherEnvironment = await open(merchant.keys.live.publicKey);
      oldPublic.subscribe('s', STATUS_CHANGED);
      const rotated = await http(`mutation { rotateKeys(input: { keys: [PUBLIC], graceSeconds: 0 }) { publicKey } }`, {}, merchant.keys.test.privateKey);
      expect(rotated.errors).toBeUndefined();
      expect(await closedWithin(oldPublic, 3000)).toEqual({ code: 4403, reason: expect.any(String) });
      const newPublic = await open(rotated.data.rotateKeys.publicKey);
      expect(newPublic.isOpen).toBe(true);
      expect(await closedWithin(privateSocket, 300)).toBeNull();
      expect(otherEnvironment.isOpen).toBe(true);
    });

    it('with a grace period, the sockets close when the replaced key stops working', async () => {
      const merchant = await createTestMerchant(t);
      const oldPrivate = await open(merchant.keys.test.privateKey);
      const rotated = await http(
        `mutation { rotateKeys(input: { keys: [PRIVATE], graceSeconds: 1 }) { privateKey previousKeysExpireAt } }`,
        {},
        merchant.keys.test.privateKey,
      );
      expect(rotated.errors).toBeUndefined();
      expect(await closedWithin(oldPrivate, 300)).toBeNull();
      const closed = await closedWithin(oldPrivate, 4000);
      expect(closed?.code).toBe(4403);
      expect(Date.now()).toBeGreaterThanOrEqual(new Date(rotated.data.rotateKeys.previousKeysExpireAt).getTime());
    });

    it('a rotation on one instance closes the sockets on another', async () => {
      const other = await startTestService();
      try {
        const merchant = await createTestMerchant(t);
        const elsewhere = await open(merchant.keys.test.publicKey, other);
        await http(`mutation { rotateKeys(input: { keys: [PUBLIC] }) { publicKey } }`, {}, merchant.keys.test.privateKey);
        expect((await closedWithin(elsewhere, 3000))?.code).toBe(4403);
      } finally {
        await other.close();
      }
    });
  });
  it('dates the database cannot hold (year 0) are a validation error, not an internal one', async () => {
    const key = m.keys.test.privateKey;
    const orders = await http(`{ orders(first: 5, filter: { createdFrom: "0000-01-01T00:00:00Z" }) { totalCount } }`, {}, key);
    expect(orders.errors[0].extensions.code).toBe('VAL400');
    expect(orders.errors[0].message).toMatch(/CreatedFrom/);
    const summary = await http(`{ dashboardSummary(from: "0000-01-01T00:00:00Z", to: "2026-01-01T00:00:00Z") { successRate } }`, {}, key);
    expect(summary.errors[0].extensions.code).toBe('VAL400');
    const fine = await http(`{ orders(first: 5, filter: { createdFrom: "2000-01-01T00:00:00Z" }) { totalCount } }`, {}, key);
    expect(fine.errors).toBeUndefined();
  });
  it('an order returned by a mutation shows customer and card data to the private key only', async () => {
    const publicKey = m.keys.test.publicKey;
    const mutation = (fields: string) => `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { ${fields} } }`;
    const plain = await http(mutation('orderReference status'), { input: orderInput() }, publicKey);
    expect(plain.errors).toBeUndefined();
    expect(plain.data.createOrder.status).toBe('Initiated');
    for (const fields of ['orderReference customer { emailAddress }', 'orderReference cardDetails { cardLastFourDigits }']) {
      const body = await http(mutation(fields), { input: orderInput() }, publicKey);
      expect(body.errors[0].extensions.code).toBe('FORBIDDEN');
      expect(JSON.stringify(body)).not.toContain('ada@example.test');
    }
    const own = await http(mutation('customer { emailAddress }'), { input: orderInput() }, m.keys.test.privateKey);
    expect(own.data.createOrder.customer.emailAddress).toBe('ada@example.test');
    const settings = await http('{ webhookSettings { webhookUrl } }', {}, publicKey);
    expect(settings.errors[0].extensions.code).toBe('FORBIDDEN');
  });
});

async function waitUntil(predicate: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
