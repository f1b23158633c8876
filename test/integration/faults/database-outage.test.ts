import { Client } from 'pg';
import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request, type HttpResult } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { createScratchDatabase } from '../../support/scratch-database';
import { TcpProxy } from '../../support/tcp-proxy';
import { closedWithin, WsSession } from '../graphql/ws-session';
import { waitFor } from '../events/helpers';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const UNAVAILABLE = { status: 'failed', statusCode: '503', message: 'The service is temporarily unavailable, please try again later.' };

const orderPlaintext = (reference: string) => ({
  customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada-${reference}@example.test` },
  order: { amount: 1000, reference, description: 'Outage test', currency: 'NGN' },
  payment: { RedirectUrl: 'https://merchant.test/done' },
});
const payPlaintext = (reference: string) => ({
  reference,
  paymentOption: 'C',
  country: 'NG',
  card: { cardNumber: '5123450000000008', expiryMonth: '11', expiryYear: '31', cvv: '123', billingAddress: { street: 's', city: 'c', country: 'NG' } },
});

/**
 * Issue 13, fault (a): the service runs on PostgreSQL through a TCP proxy the test controls.
 * While the proxy is cut, readiness says 503, requests are answered (the workers keep getting
 * answers while it lasts, never stuck behind the missing database) with the documented 503 and a
 * request id, and no transaction is left half-written; once restored, the same process serves
 * again without a restart.
 */
describe('PostgreSQL cut while serving', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let proxy: TcpProxy;
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    scratch = await createScratchDatabase('faults_outage');
    proxy = new TcpProxy('127.0.0.1', Number(new URL(scratch.url).port || 5432));
    const viaProxy = new URL(scratch.url);
    viaProxy.host = `127.0.0.1:${await proxy.start()}`;
    t = await startTestService({ DATABASE_URL: viaProxy.toString(), RATE_LIMIT: 'off' });
    m = await createTestMerchant(t);
  }, 90_000);
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
    await scratch?.drop();
  });

  /** A request's answer, kept for the checks every answer must pass (the request id, the documented shape). */
  const answer = async (what: () => Promise<HttpResult>) => ({ res: await what() });

  it('answers 503 while cut, writes nothing by halves, and recovers without a restart', async () => {
    const k = m.keys.test;
    const answers: Array<{ kind: 'create' | 'pay'; reference: string; res: HttpResult }> = [];
    let stop = false;
    let counter = 0;
    const worker = async (w: number) => {
      while (!stop) {
        const reference = `OUT-${w}-${++counter}-${Date.now()}`;
        const created = await answer(() => postEncrypted(t.baseUrl, '/checkout/order/create', k.publicKey, k.encryptionKey, orderPlaintext(reference)));
        answers.push({ kind: 'create', reference, ...created });
        if (created.res.status !== 200) continue;
        const paid = await answer(() => postEncrypted(t.baseUrl, '/checkout/order/pay', k.publicKey, k.encryptionKey, payPlaintext(reference)));
        answers.push({ kind: 'pay', reference, ...paid });
      }
    };
    const workers = [1, 2, 3, 4].map(worker);

    const until = async (condition: () => boolean, what: string) => {
      const deadline = Date.now() + 15_000;
      while (!condition()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    await until(() => answers.filter((a) => a.res.status === 200).length >= 8, 'traffic before the cut');
    proxy.cut();
    const cutAt = answers.length;
    await until(() => answers.slice(cutAt).some((a) => a.res.status === 503), 'the cut to be felt');
    const readyWhileCut = await answer(() => request(t.baseUrl, 'GET', '/health/ready'));
    const healthWhileCut = await request(t.baseUrl, 'GET', '/health');
    const liveWhileCut = await request(t.baseUrl, 'GET', '/health/live');
    const metricsWhileCut = await answer(() => request(t.baseUrl, 'GET', '/metrics'));
    const graphqlWhileCut = await answer(() =>
      request(t.baseUrl, 'POST', '/graphql', {
        apiKey: k.privateKey,
        headers: { 'x-request-id': 'outage-gql-1' },
        body: { query: '{ orders(first: 1) { totalCount } }' },
      }),
    );
    // The workers go on getting answers while the database is away: each one a prompt 503.
    const feltAt = answers.length;
    await until(() => answers.slice(feltAt).filter((a) => a.res.status === 503).length >= 8, 'answers during the cut');
    proxy.restore();
    const restoredAt = answers.length;
    await until(() => answers.slice(restoredAt).filter((a) => a.res.status === 200).length >= 8, 'traffic after the restore');
    stop = true;
    await Promise.all(workers);

    expect(readyWhileCut.res.status).toBe(503);
    expect(readyWhileCut.res.body).toEqual({ status: 'unavailable' });
    expect(healthWhileCut.status).toBe(503);
    expect(liveWhileCut.status).toBe(200);
    expect(metricsWhileCut.res.status).toBe(200);
    // GraphQL says the same in its own shape, with the request id for support.
    expect(graphqlWhileCut.res.body.errors).toEqual([
      expect.objectContaining({ message: UNAVAILABLE.message, extensions: { code: 'SERVICE_UNAVAILABLE', requestId: 'outage-gql-1' } }),
    ]);

    // Traffic went on before, during and after the cut, and the cut was felt.
    expect(cutAt).toBeGreaterThanOrEqual(8);
    const unavailable = answers.filter((a) => a.res.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    for (const a of answers) {
      expect(a.res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      // Success, or the documented "try again later": never a 500, never a hang.
      expect([200, 503]).toContain(a.res.status);
      if (a.res.status === 503) {
        expect(a.res.body).toEqual(UNAVAILABLE);
        expect(a.res.headers.get('retry-after')).toBe('5');
      }
    }
    // Recovery, checked directly too.
    expect((await request(t.baseUrl, 'GET', '/health/ready')).status).toBe(200);
    const reference = `OUT-after-${Date.now()}`;
    expect((await postEncrypted(t.baseUrl, '/checkout/order/create', k.publicKey, k.encryptionKey, orderPlaintext(reference))).status).toBe(200);
    const paid = await postEncrypted(t.baseUrl, '/checkout/order/pay', k.publicKey, k.encryptionKey, payPlaintext(reference));
    expect(paid.status).toBe(200);
    expect(paid.body.statusCode).toBe('02');

    // The database as the service left it (read directly, not through the proxy).
    const db = new Client({ connectionString: scratch.url });
    await db.connect();
    try {
      const orders = (
        await db.query(
          `select o.reference, o.status_id,
                (select count(*) from timeline_event e where e.order_id = o.id and e.event = 'order.created')::int as created_events,
                (select count(*) from order_payment p where p.order_id = o.id)::int as payments,
                (select count(*) from order_payment p where p.order_id = o.id and p.status_id = o.status_id)::int as payments_in_order_status,
                (select count(*) from timeline_event e where e.order_id = o.id and e.event = 'payment.initiated')::int as initiated_events,
                (select count(*) from card_detail c join order_payment p on p.id = c.order_payment_id where p.order_id = o.id)::int as card_details
           from checkout_order o`,
        )
      ).rows as Array<{
        reference: string;
        status_id: number;
        created_events: number;
        payments: number;
        payments_in_order_status: number;
        initiated_events: number;
        card_details: number;
      }>;
      const byReference = new Map(orders.map((o) => [o.reference, o]));
      // Every order the service acknowledged exists; every paid one shows its attempt.
      for (const a of answers) {
        if (a.res.status !== 200) continue;
        const order = byReference.get(a.reference);
        expect(order).toBeDefined();
        if (a.kind === 'pay') expect(order!.payments).toBe(1);
      }
      for (const o of orders) {
        // Each transaction wrote all its rows or none: the order with its created event; an
        // attempt with its payment, card details and initiated event, in the order's status.
        expect(o).toEqual(expect.objectContaining({ created_events: 1 }));
        if (o.status_id === 1) expect(o.payments).toBe(0);
        else {
          expect(o).toEqual(expect.objectContaining({ payments: 1, initiated_events: 1, card_details: 1, payments_in_order_status: 1 }));
        }
      }
      expect(orders.length).toBeGreaterThan(5);
    } finally {
      await db.end();
    }
  }, 60_000);

  it('tells a GraphQL WebSocket opened while the database is cut to try again later (1013, which clients retry), and lets it in once the database is back', async () => {
    const k = m.keys.test;
    const fanout = t.service.runtime.ctx.services.eventFanout;
    const before = await WsSession.open(t.baseUrl, { 'api-key': k.privateKey });
    expect(before.messages.map((msg) => msg.type)).toEqual(['connection_ack']);
    proxy.cut();
    try {
      // Not listening: the key caches are bypassed, so the key is checked against the database.
      await waitFor(() => !fanout.hearing, 10_000, 'the LISTEN connection to drop');
      const during = await WsSession.open(t.baseUrl, { 'api-key': k.privateKey });
      // Not 4500 (an internal error, after which graphql-ws clients stop retrying), not 4403.
      expect(await closedWithin(during, 10_000)).toEqual({ code: 1013, reason: 'Try again later: the api-key or session could not be checked' });
    } finally {
      proxy.restore();
    }
    await waitFor(() => fanout.hearing, 20_000, 'the LISTEN connection to return');
    const after = await WsSession.open(t.baseUrl, { 'api-key': k.privateKey });
    expect(after.messages.map((msg) => msg.type)).toEqual(['connection_ack']);
    // The socket opened before the cut had its key checked again once the database answered, and stays.
    expect(await closedWithin(before, 500)).toBeNull();
    before.close();
    after.close();
  }, 60_000);
});
