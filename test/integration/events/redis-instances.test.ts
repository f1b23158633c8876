import 'reflect-metadata';
import WebSocket from 'ws';
import { createClient, type Client as WsClient } from 'graphql-ws';
import { startTestService, type TestService } from '../../support/service';
import { startChildService, type ChildService } from '../../support/child-service';
import { createTestMerchant } from '../../support/merchants';
import { postEncrypted, request } from '../../support/http';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server';
import { httpFrom } from '../protection/raw-http';
import { EVENTS_ENV, createScratchDatabase, startReceiver, waitFor, type Receiver } from './helpers';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

/** Generous: the 3-D Secure answers and health checks this file sends from 127.0.0.1 count too. */
const PER_IP = 150;

/**
 * Three instances of the service on one PostgreSQL database of this file's own and one Redis:
 * A and B in this process, C a process of its own (the real entry point) started with the
 * test-only crash hook, so that the first payment it sends to the processor kills it (SIGKILL)
 * before the answer is written. C answers 3-D Secure pages (which never trigger the hook) until
 * then. Events travel through Redis: no instance LISTENs on PostgreSQL.
 */
describeWithRedis('three instances sharing one PostgreSQL database and one Redis', () => {
  let redis: RedisServer;
  let drop: () => Promise<void> = async () => undefined;
  let a: TestService;
  let b: TestService;
  let c: ChildService;
  let receiver: Receiver;
  let m: CreatedMerchant;

  beforeAll(async () => {
    redis = await startRedisServer();
    const scratch = await createScratchDatabase('redis_instances');
    drop = scratch.drop;
    const env = {
      ...EVENTS_ENV,
      // "Delivered once" is checked below: a receiver's answer that a loaded machine delays past a
      // short timeout is retried (at least once, by design), so give answers all the time they need.
      WEBHOOK_TIMEOUT_MS: '20000',
      DATABASE_URL: scratch.url,
      REDIS_URL: redis.url,
      RATE_LIMIT: 'on',
      RATE_LIMIT_PER_IP: String(PER_IP),
      RATE_LIMIT_CARD_ATTEMPTS_PER_IP: '1000',
      // The survivors reconcile what a dead instance left with the processor.
      SCHEDULER_INTERVAL_MS: '200',
      // Long enough that only an invalidation, never the caches' own expiry, explains a change seen on another instance.
      TENANT_CACHE_TTL_MS: '600000',
    };
    [a, b, c] = await Promise.all([
      startTestService(env),
      startTestService(env),
      startChildService(scratch.url, { ...env, LOG_LEVEL: 'warn', PGW_TEST_CRASH_AFTER_PROCESSOR_CALL: '1' }),
    ]);
    receiver = await startReceiver();
    m = await createTestMerchant(a, { webhookUrl: receiver.url });
  }, 120_000);

  afterAll(async () => {
    await c?.stop('SIGKILL');
    await Promise.all([a?.close(), b?.close()]);
    await receiver?.close();
    await redis?.stop();
    await drop();
  }, 60_000);

  const sql = (q: string, p: unknown[] = []) => a.service.runtime.ctx.orm.em.getConnection().execute(q, p);
  const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
  let counter = 0;

  async function createOrder(on: string, extra: Record<string, unknown> = {}): Promise<string> {
    const reference = `THREE-${process.pid}-${++counter}`;
    const created = await postEncrypted(on, '/checkout/order/create', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada+${counter}@example.test` },
      order: { amount: 1000, reference, description: 'Order', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/return', ...extra },
    });
    if (created.body?.statusCode !== '01') throw new Error(`order/create failed: ${created.text}`);
    return reference;
  }

  const pay = (on: string, reference: string) =>
    postEncrypted(on, '/checkout/order/pay', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      reference,
      paymentOption: 'C',
      country: 'NG',
      card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
    });

  /** Pays by card on `payOn` (a 3-D Secure challenge) and answers the challenge on `answerOn`'s page. */
  async function payThrough(payOn: string, answerOn: string): Promise<string> {
    const reference = await createOrder(payOn);
    const paid = await pay(payOn, reference);
    if (paid.body?.statusCode !== '02') throw new Error(`order/pay failed: ${paid.text}`);
    const page = new URL(paid.body.data.paymentDetail.redirectUrl as string);
    const answer = await fetch(`${answerOn}${page.pathname}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'otp=123456',
    });
    if (answer.status !== 303) throw new Error(`3-D Secure answer: ${answer.status}`);
    return reference;
  }

  const statusOf = async (reference: string) => (await sql('select status_id from checkout_order where reference = ?', [reference]))[0]?.status_id as number;

  /** Every webhook delivery of the file's merchant recorded (none pending), then what the receiver got, by order. */
  async function deliveredOnce(references: string[]): Promise<void> {
    await waitFor(() => references.every((r) => receiver.received.some((h) => h.json?.data?.orderReference === r)), 30_000, 'a webhook for every order');
    await waitFor(
      async () => (await sql(`select count(*)::int as n from webhook_delivery where state = 'pending'`))[0].n === 0,
      15_000,
      'every delivery recorded',
    );
    for (const reference of references) {
      const hooks = receiver.received.filter((h) => h.json?.data?.orderReference === reference);
      expect(hooks.map((h) => [h.json.notifyType, h.json.data.statusId])).toEqual([['successful', 5]]);
    }
    const ids = receiver.received.map((h) => String(h.headers['webhook-id']));
    expect(new Set(ids).size).toBe(ids.length);
  }

  it('carries events through Redis: no instance holds a LISTEN connection on PostgreSQL', async () => {
    for (const t of [a, b]) expect(t.service.runtime.ctx.services.eventFanout.mode).toBe('redis');
    const listeners = await sql(`select count(*)::int as n from pg_stat_activity where datname = current_database() and application_name like 'pgw-events-%'`);
    expect(listeners[0].n).toBe(0);
  });

  it('lets exactly the per-IP number of requests through across the three instances', async () => {
    const client = '127.0.3.7';
    const bases = [a.baseUrl, b.baseUrl, c.baseUrl];
    const answers = [];
    for (let i = 0; i < PER_IP * 2; i++) answers.push(await httpFrom(bases[i % 3]!, client, 'GET', '/checkout/links/types'));
    expect(answers.map((r) => r.status)).toEqual([...Array(PER_IP).fill(401), ...Array(PER_IP).fill(429)]);
  }, 120_000);

  it('refuses on B and C, long before their caches expire, a key rotated on A without a grace period', async () => {
    const other = await createTestMerchant(a);
    const { publicKey, privateKey, encryptionKey } = other.keys.test;
    const fee = (on: string, key: string) =>
      postEncrypted(on, '/checkout/order/fee', key, encryptionKey, { amount: 1000, paymentOption: 'C', currency: 'NGN' });
    // The key is cached on B and C.
    for (const on of [b.baseUrl, c.baseUrl, b.baseUrl, c.baseUrl]) expect((await fee(on, publicKey)).status).toBe(200);
    const rotated = await request(a.baseUrl, 'POST', '/graphql', {
      apiKey: privateKey,
      body: { query: 'mutation { rotateKeys(input: { keys: [PUBLIC], graceSeconds: 0 }) { publicKey } }' },
    });
    expect(rotated.body.errors).toBeUndefined();
    for (const on of [b.baseUrl, c.baseUrl]) {
      await waitFor(async () => (await fee(on, publicKey)).status === 401, 10_000, `the rotated key refused on ${on}`);
      expect((await fee(on, rotated.body.data.rotateKeys.publicKey)).status).toBe(200);
    }
  }, 30_000);

  it('shows a GraphQL subscriber on A a settlement paid through C, and delivers its webhook once', async () => {
    const ws: WsClient = createClient({
      url: `${a.baseUrl.replace('http', 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { 'api-key': m.keys.test.publicKey },
      retryAttempts: 0,
      lazy: false,
    });
    const seen: Array<{ reference: string; status: string; sequence: number }> = [];
    const connected = new Promise<void>((resolve) => ws.on('connected', () => resolve()));
    const unsubscribe = ws.subscribe(
      { query: 'subscription { orderStatusChanged { reference status sequence } }' },
      { next: (v) => seen.push((v.data as any).orderStatusChanged), error: () => undefined, complete: () => undefined },
    );
    try {
      await connected;
      await waitFor(() => a.service.runtime.ctx.services.orderStatusBus.totalSubscribers() === 1, 10_000, 'the subscription on A');
      // Paid on B (the challenge) and settled on C (the answer to the challenge): A hears both.
      const reference = await payThrough(b.baseUrl, c.baseUrl);
      await waitFor(() => seen.some((s) => s.reference === reference && s.sequence === 2), 10_000, 'the settlement on A');
      expect(seen.filter((s) => s.reference === reference).map((s) => [s.sequence, s.status])).toEqual([
        [1, 'pending authentication'],
        [2, 'Successful'],
      ]);
      await deliveredOnce([reference]);
    } finally {
      unsubscribe();
      await ws.dispose();
    }
  }, 60_000);

  it('delivers each webhook once for orders paid across the three instances', async () => {
    const references = await Promise.all([
      payThrough(a.baseUrl, b.baseUrl),
      payThrough(b.baseUrl, c.baseUrl),
      payThrough(a.baseUrl, c.baseUrl),
      payThrough(b.baseUrl, a.baseUrl),
      payThrough(a.baseUrl, a.baseUrl),
    ]);
    await deliveredOnce(references);
  }, 60_000);

  it('loses nothing when an instance dies while payments are in flight: every order is settled and its webhook delivered once', async () => {
    // A payment link without 3-D Secure: the processor's answer settles the order in the pay request itself.
    const link = (
      await request(a.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: { Name: 'No 3DS', Description: 'd', PaymentType: 'MC', Currency: 'NGN', AuthOption: 'NOAUTH', Amount: '1000' },
      })
    ).body.data.paymentLink;
    const onC = await createOrder(a.baseUrl, { paymentLinkId: link.id });
    const before = receiver.received.length;
    const [cAnswer, ...others] = await Promise.all([
      pay(c.baseUrl, onC).then(
        () => 'answered',
        () => 'connection lost',
      ),
      payThrough(a.baseUrl, b.baseUrl),
      payThrough(b.baseUrl, a.baseUrl),
      payThrough(a.baseUrl, a.baseUrl),
    ]);
    // C died after the processor approved, before it wrote the answer: the order was left Processing.
    expect(cAnswer).toBe('connection lost');
    expect(await c.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(receiver.received.slice(before).some((h) => h.json?.data?.orderReference === onC)).toBe(false);

    // A and B settle it from the processor's record once its grace period is over, and deliver its webhook.
    await waitFor(async () => (await statusOf(onC)) === 5, 30_000, 'the order paid on C settled by the survivors');
    await deliveredOnce([onC, ...others]);
    const events = await sql(`select e.notify_type from outbox_event e join checkout_order o on o.id = e.order_id where o.reference = ? order by e.sequence`, [
      onC,
    ]);
    expect(events).toEqual([{ notify_type: 'successful' }]);
  }, 90_000);
});
