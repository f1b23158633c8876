import { startTestService, type TestService } from '../../support/service';
import { graphql, postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { createScratchDatabase } from '../../support/scratch-database';
import { startReceiver, waitFor, type Receiver } from '../events/helpers';
import { WsSession } from '../graphql/ws-session';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';
const billing = { street: '1 Marina', city: 'Lagos', country: 'NG' };

/** The samples of a Prometheus text exposition, by name, with their labels. */
function parse(text: string): Array<{ name: string; labels: Record<string, string>; value: number }> {
  const samples = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1]!] = pair[2]!;
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/**
 * Issue 13 point 3: /metrics after real traffic (REST, GraphQL over HTTP and WebSocket,
 * payments, webhooks) shows the named series with the values the traffic implies; the token
 * is enforced. A database of this file's own, so the webhook backlog is this file's alone.
 */
describe('GET /metrics', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let t: TestService;
  let m: CreatedMerchant;
  let receiver: Receiver;
  beforeAll(async () => {
    scratch = await createScratchDatabase('metrics');
    // The first webhook request fails (500), every later one succeeds.
    receiver = await startReceiver((_request, index) => ({ status: index === 0 ? 500 : 200 }));
    t = await startTestService({
      DATABASE_URL: scratch.url,
      METRICS_TOKEN,
      RATE_LIMIT: 'off',
      WEBHOOK_RETRY_DELAYS_MS: '0',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    });
    m = await createTestMerchant(t, { webhookUrl: receiver.url });
  }, 90_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await scratch?.drop();
  });

  const scrape = async () => {
    const res = await request(t.baseUrl, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parse(res.text);
  };
  const value = (samples: ReturnType<typeof parse>, name: string, labels: Record<string, string> = {}) => {
    const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    if (found.length === 0) throw new Error(`no sample ${name} ${JSON.stringify(labels)}`);
    return found.reduce((sum, s) => sum + s.value, 0);
  };

  it('refuses a scrape without the token, or with a wrong one (401)', async () => {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong-token-0123456789' },
      { authorization: `Basic ${METRICS_TOKEN}` },
      { authorization: METRICS_TOKEN },
    ]) {
      const res = await request(t.baseUrl, 'GET', '/metrics', { headers });
      expect(res.status).toBe(401);
      expect(res.text).not.toContain('gateway_');
    }
  });

  it('counts requests by route pattern, GraphQL operations, payment outcomes, webhooks, subscriptions and the pool', async () => {
    const k = m.keys.test;
    const references = [`MET-${Date.now()}-1`, `MET-${Date.now()}-2`, `MET-${Date.now()}-3`];
    for (const reference of references) {
      const created = await postEncrypted(t.baseUrl, '/checkout/order/create', k.publicKey, k.encryptionKey, {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
        order: { amount: 1000, reference, description: 'Metrics', currency: 'NGN' },
        payment: { RedirectUrl: 'https://merchant.test/done' },
      });
      expect(created.status).toBe(200);
    }
    expect((await request(t.baseUrl, 'GET', '/no/such/path')).status).toBe(404);

    // Two card payments through 3-D Secure: one approved, one declined for insufficient funds.
    const pages: string[] = [];
    const pay = async (reference: string, cardNumber: string) => {
      const paid = await postEncrypted(t.baseUrl, '/checkout/order/pay', k.publicKey, k.encryptionKey, {
        reference,
        paymentOption: 'C',
        country: 'NG',
        card: { cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
      });
      expect(paid.body.statusCode).toBe('02');
      pages.push(paid.body.data.paymentDetail.redirectUrl);
      const page = await fetch(paid.body.data.paymentDetail.redirectUrl, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'otp=123456',
      });
      expect(page.status).toBeLessThan(400);
    };
    await pay(references[0]!, '5123450000000008');
    await pay(references[1]!, '4000000000000002');

    // GraphQL: a named query over HTTP, a failing one, and a live subscription over WebSocket.
    const q = await graphql(t.baseUrl, 'query RecentOrders { orders(first: 2) { edges { node { orderReference } } } }', {}, { 'api-key': k.privateKey });
    expect(q.body.errors).toBeUndefined();
    await graphql(t.baseUrl, 'query Broken { noSuchField }', {}, { 'api-key': k.privateKey });
    const ws = await WsSession.open(t.baseUrl, { 'api-key': k.privateKey });
    ws.subscribe('s1', 'subscription Watch { orderStatusChanged { reference status } }');
    ws.subscribe('q1', 'query OverSocket { orders(first: 1) { edges { node { orderReference } } } }');
    await ws.result('q1');
    await ws.waitFor((msg) => msg.id === 'q1' && msg.type === 'complete');

    const before = await scrape();
    // Webhooks: each settled payment queued one delivery; none attempted yet (no dispatcher runs in tests).
    const due = (await t.service.runtime.ctx.orm.em.getConnection().execute(`select count(*)::int as n from webhook_delivery where state = 'pending'`))[0]
      .n as number;
    expect(due).toBeGreaterThanOrEqual(2);
    expect(value(before, 'gateway_webhook_backlog_deliveries')).toBe(due);
    expect(value(before, 'gateway_webhook_pending_deliveries')).toBe(due);
    expect(value(before, 'gateway_webhook_oldest_due_seconds')).toBeGreaterThanOrEqual(0);
    expect(value(before, 'gateway_graphql_subscriptions')).toBe(1);

    const attempts = await t.service.runtime.ctx.services.webhooks.runOnce();
    expect(attempts).toBe(due + 1); // the first failed once and was retried
    ws.complete('s1');
    await ws.waitFor((msg) => msg.id === 's1' && msg.type === 'complete').catch(() => undefined);
    // The server has ended the subscription: it left the bus and was counted as completed.
    const s = await waitFor(
      async () => {
        const scraped = await scrape();
        const ended =
          t.service.runtime.ctx.services.orderStatusBus.totalSubscribers() === 0 &&
          value(scraped, 'gateway_graphql_operations_total', { transport: 'websocket', operation_type: 'subscription', operation_name: 'Watch' }) === 1;
        return ended ? scraped : null;
      },
      10_000,
      'the subscription ended on the server',
    );
    // HTTP: per route pattern and status, never per raw URL.
    expect(value(s, 'gateway_http_requests_total', { method: 'POST', route: '/checkout/order/create', status_code: '200' })).toBe(3);
    expect(value(s, 'gateway_http_request_duration_seconds_count', { method: 'POST', route: '/checkout/order/create', status_code: '200' })).toBe(3);
    expect(value(s, 'gateway_http_request_duration_seconds_sum', { method: 'POST', route: '/checkout/order/create' })).toBeGreaterThan(0);
    // The 3-D Secure page of each payment: one route pattern, whatever the payment's reference.
    expect(value(s, 'gateway_http_requests_total', { method: 'POST', route: '/sandbox/3ds/:reference' })).toBe(2);
    expect(value(s, 'gateway_http_requests_total', { route: 'unmatched', status_code: '404' })).toBe(1);
    const rawPaths = [...references, ...pages.map((u) => new URL(u).pathname), '/no/such/path'];
    expect(s.filter((x) => Object.values(x.labels).some((v) => rawPaths.some((p) => v.includes(p))))).toEqual([]);
    // GraphQL operations, by transport, type, name and outcome.
    expect(value(s, 'gateway_graphql_operations_total', { transport: 'http', operation_type: 'query', operation_name: 'RecentOrders', outcome: 'ok' })).toBe(1);
    expect(value(s, 'gateway_graphql_operations_total', { transport: 'http', operation_name: 'Broken', outcome: 'error' })).toBe(1);
    expect(value(s, 'gateway_graphql_operation_duration_seconds_count', { transport: 'http', operation_name: 'RecentOrders' })).toBe(1);
    expect(value(s, 'gateway_graphql_operations_total', { transport: 'websocket', operation_type: 'query', operation_name: 'OverSocket', outcome: 'ok' })).toBe(
      1,
    );
    expect(value(s, 'gateway_graphql_operations_total', { transport: 'websocket', operation_type: 'subscription', operation_name: 'Watch' })).toBe(1);
    expect(value(s, 'gateway_graphql_subscriptions')).toBe(0);
    // Payment outcomes by method, status and code.
    expect(value(s, 'gateway_payment_outcomes_total', { method: 'card', status: 'pending', code: '02' })).toBe(2);
    expect(value(s, 'gateway_payment_outcomes_total', { method: 'card', status: 'successful', code: '00' })).toBe(1);
    expect(value(s, 'gateway_payment_outcomes_total', { method: 'card', status: 'failed', code: '51' })).toBe(1);
    // Webhook attempts, failures and lag.
    expect(value(s, 'gateway_webhook_attempts_total', { result: 'delivered' })).toBe(due);
    expect(value(s, 'gateway_webhook_attempts_total', { result: 'retry' })).toBe(1);
    expect(value(s, 'gateway_webhook_failures_total', { reason: 'status' })).toBe(1);
    expect(value(s, 'gateway_webhook_attempt_duration_seconds_count')).toBe(due + 1);
    expect(value(s, 'gateway_webhook_delivery_lag_seconds_count')).toBe(due + 1);
    // The pool, the event loop and the process.
    expect(value(s, 'gateway_db_pool_max_connections')).toBe(4);
    expect(value(s, 'gateway_db_pool_connections', { state: 'used' })).toBeGreaterThanOrEqual(0);
    expect(value(s, 'nodejs_eventloop_lag_p99_seconds')).toBeGreaterThan(0);
    expect(value(s, 'process_resident_memory_bytes')).toBeGreaterThan(1e6);
    ws.close();
  }, 60_000);

  it('answers the health endpoints', async () => {
    for (const path of ['/health', '/health/ready', '/health/live']) {
      const res = await request(t.baseUrl, 'GET', path);
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 200, body: { status: 'ok' } });
    }
  });
});
