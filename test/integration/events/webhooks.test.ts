import { startTestService, type TestService } from '../../support/service';
import { request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { addMember, signInMember } from '../../support/members';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import type { Tenant } from '../../../src/merchants/tenant';
import type { OrderStatusChange } from '../../../src/events/order-status-bus';
import { DomainError } from '../../../src/shared/errors';
import { PostgresFanout } from '../../../src/events/event-fanout';
import { EVENTS_ENV, createScratchDatabase, payOrder, sleep, startReceiver, verifiesIndependently, waitFor, type Receiver } from './helpers';

/**
 * Webhooks end to end on the real PostgreSQL (a database of this file's own), one service in this process, receivers on
 * loopback: signing, body, retries, dead deliveries, redelivery, test pings, sequences,
 * per-endpoint concurrency.
 */
describe('webhooks', () => {
  let t: TestService;
  let dropDatabase: () => Promise<void> = async () => undefined;
  const receivers: Receiver[] = [];
  beforeAll(async () => {
    // A database of this file's own: its dispatcher shares work with no other test file's instances.
    const scratch = await createScratchDatabase('events');
    dropDatabase = scratch.drop;
    t = await startTestService({ ...EVENTS_ENV, DATABASE_URL: scratch.url });
  }, 30_000);
  afterAll(async () => {
    await t?.close();
    await Promise.all(receivers.map((r) => r.close()));
    await dropDatabase();
  });

  const services = () => t.service.runtime.ctx.services;
  async function receiver(reply?: Receiver['reply']): Promise<Receiver> {
    const r = await startReceiver(reply);
    receivers.push(r);
    return r;
  }
  async function merchantWith(r: Receiver | null): Promise<{ m: CreatedMerchant; tenant: Tenant }> {
    const m = await createTestMerchant(t, r ? { webhookUrl: r.url } : {});
    return { m, tenant: await services().auth.authenticate(m.keys.test.privateKey) };
  }
  const deliveriesOf = (tenant: Tenant, filter: { eventId?: string; orderReference?: string } = {}) => services().webhooks.listDeliveries(tenant, filter);

  it('delivers the documented body, signed per Standard Webhooks, verifiable over the raw body', async () => {
    const r = await receiver();
    const { m, tenant } = await merchantWith(r);
    const reference = await payOrder(t.baseUrl, m.keys.test);
    const [hook] = await r.waitForCount(1);
    // Every attempt is recorded: a delivered delivery with one attempt was sent once, and a
    // delivered delivery is never claimed again.
    const [delivered] = await waitFor(
      async () => {
        const list = await deliveriesOf(tenant, { orderReference: reference });
        return list[0]?.state === 'delivered' ? list : null;
      },
      5000,
      'delivered state',
    );
    expect(delivered!.attempts.map((a) => a.statusCode)).toEqual([200]);
    expect(r.received).toHaveLength(1);

    const { headers, body, json } = hook!;
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-id']).toBe(json.eventId);
    expect(json.eventId).toMatch(/^[0-9a-f-]{36}$/);
    expect(Math.abs(Number(headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(verifiesIndependently(m.webhookSecret, headers, body)).toBe(true);
    // Any change to the raw body breaks the signature: receivers verify before parsing.
    expect(verifiesIndependently(m.webhookSecret, headers, JSON.stringify(json, null, 1))).toBe(false);

    const verify = await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: m.keys.test.privateKey, body: { reference } });
    expect(Object.keys(json)).toEqual(['notify', 'notifyType', 'eventId', 'livemode', 'sequence', 'data', 'status', 'statusCode', 'message']);
    expect(json).toEqual({
      notify: 'transaction',
      notifyType: 'successful',
      eventId: headers['webhook-id'],
      livemode: false,
      sequence: 2,
      data: verify.body.data,
      status: 'success',
      statusCode: '00',
      message: 'Order details fetched successfully',
    });

    const deliveries = await waitFor(
      async () => {
        const list = await deliveriesOf(tenant, { orderReference: reference });
        return list[0]?.state === 'delivered' ? list : null;
      },
      5000,
      'delivered state',
    );
    expect(deliveries).toEqual([
      expect.objectContaining({
        eventId: json.eventId,
        notify: 'transaction',
        notifyType: 'successful',
        orderReference: reference,
        sequence: 2,
        url: r.url,
        state: 'delivered',
        attemptCount: 1,
        nextAttemptAt: null,
        deliveredAt: expect.any(Date),
        attempts: [expect.objectContaining({ statusCode: 200, error: null, responseBody: 'ok', latencyMs: expect.any(Number) })],
      }),
    ]);
    const timeline = await services().timeline.list(tenant, reference);
    expect(timeline.filter((e) => e.event.startsWith('webhook.')).map((e) => [e.event, (e.metadata as any).eventId])).toEqual([
      ['webhook.delivered', json.eventId],
    ]);
  });

  it('shows the webhook URL on the order timeline whole to the roles that manage webhooks, and only its origin to the others', async () => {
    const r = await receiver();
    const secretUrl = `${r.url}/t0k3n-path?token=s3cret`;
    const m = await createTestMerchant(t, { webhookUrl: secretUrl });
    const reference = await payOrder(t.baseUrl, m.keys.test);
    const TIMELINE = `query ($reference: String!) { orderTimeline(reference: $reference) { event description metadata } }`;
    const webhookEntries = async (headers: Record<string, string>) => {
      const res = await request(t.baseUrl, 'POST', '/graphql', { body: { query: TIMELINE, variables: { reference } }, headers });
      return (res.body.data.orderTimeline as Array<{ event: string; description: string; metadata: any }>).filter((e) => e.event.startsWith('webhook.'));
    };
    const [full] = await waitFor(
      async () => {
        const entries = await webhookEntries({ 'api-key': m.keys.test.privateKey });
        return entries.length ? entries : null;
      },
      10_000,
      'the webhook.delivered entry',
    );
    expect(full).toMatchObject({ event: 'webhook.delivered', description: `Webhook delivered to ${secretUrl}`, metadata: { url: secretUrl } });

    const origin = new URL(r.url).origin;
    for (const role of ['OWNER', 'ADMIN', 'DEVELOPER', 'SUPPORT', 'VIEWER'] as const) {
      const member = await addMember(t.baseUrl, m.keys.test.privateKey, `${role.toLowerCase()}-${m.subsidiary.id}@timeline.test`, role);
      const [entry] = await webhookEntries((await signInMember(t.baseUrl, member)).headers('test'));
      if (role === 'SUPPORT' || role === 'VIEWER') {
        expect(entry).toEqual({ ...full, description: `Webhook delivered to ${origin}`, metadata: { ...full!.metadata, url: origin } });
        expect(JSON.stringify(entry)).not.toMatch(/t0k3n|s3cret/);
      } else {
        expect(entry).toEqual(full);
      }
    }
  });

  it('announces a failed payment with notifyType failed', async () => {
    const r = await receiver();
    const { m } = await merchantWith(r);
    const reference = await payOrder(t.baseUrl, m.keys.test, '4000000000000002');
    const [hook] = await r.waitForCount(1);
    expect(hook!.json).toMatchObject({
      notify: 'transaction',
      notifyType: 'failed',
      data: { orderReference: reference, statusId: 4, paymentResponseCode: '51' },
    });
    expect(verifiesIndependently(m.webhookSecret, hook!.headers, hook!.body)).toBe(true);
  });

  it('retries a 5xx with the same eventId, webhook-id and body, recording every attempt', async () => {
    const r = await receiver((_req, i) => (i === 0 ? { status: 500, body: 'x'.repeat(5000) } : { status: 204 }));
    const { m, tenant } = await merchantWith(r);
    const reference = await payOrder(t.baseUrl, m.keys.test);
    const [first, second] = await r.waitForCount(2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.body).toBe(first!.body);
    expect(second!.json.eventId).toBe(first!.json.eventId);
    expect(verifiesIndependently(m.webhookSecret, second!.headers, second!.body)).toBe(true);
    // WEBHOOK_RETRY_DELAYS_MS=100,100 with at most ±10 % jitter.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(85);

    const [delivery] = await waitFor(
      async () => {
        const list = await deliveriesOf(tenant, { orderReference: reference });
        return list[0]?.state === 'delivered' ? list : null;
      },
      5000,
      'delivered state',
    );
    expect(delivery!.attemptCount).toBe(2);
    expect(delivery!.attempts.map((a) => a.statusCode)).toEqual([500, 204]);
    expect(delivery!.attempts[0]!.responseBody).toBe('x'.repeat(1024));
  });

  it('retries after a timeout with the same eventId', async () => {
    const r = await receiver((_req, i) => (i === 0 ? 'hang' : { status: 200 }));
    const { m, tenant } = await merchantWith(r);
    const reference = await payOrder(t.baseUrl, m.keys.test);
    const [first, second] = await r.waitForCount(2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    // WEBHOOK_TIMEOUT_MS=1000, then a retry 100 ms (±10 %) later.
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
    const [delivery] = await waitFor(
      async () => {
        const list = await deliveriesOf(tenant, { orderReference: reference });
        return list[0]?.state === 'delivered' ? list : null;
      },
      5000,
      'delivered state',
    );
    expect(delivery!.attempts).toEqual([
      expect.objectContaining({ statusCode: null, error: expect.stringContaining('timeout'), responseBody: null }),
      expect.objectContaining({ statusCode: 200, error: null }),
    ]);
  });

  it('marks a delivery dead after the last attempt, then redelivers it on request', async () => {
    let status = 503;
    const r = await receiver(() => ({ status }));
    const { m, tenant } = await merchantWith(r);
    const reference = await payOrder(t.baseUrl, m.keys.test);
    await r.waitForCount(3);
    const [dead] = await waitFor(
      async () => {
        const list = await deliveriesOf(tenant, { orderReference: reference });
        return list[0]?.state === 'dead' ? list : null;
      },
      5000,
      'dead state',
    );
    expect(dead).toMatchObject({ state: 'dead', attemptCount: 3, nextAttemptAt: null, deliveredAt: null });
    expect(dead!.attempts.map((a) => a.statusCode)).toEqual([503, 503, 503]);
    expect(r.received).toHaveLength(3); // 1 attempt + 2 retries; a dead delivery is never claimed again (checked below)
    expect(new Set(r.received.map((h) => h.headers['webhook-id']))).toEqual(new Set([dead!.eventId]));
    let timeline = await services().timeline.list(tenant, reference);
    expect(timeline.filter((e) => e.event.startsWith('webhook.')).map((e) => e.event)).toEqual(['webhook.failed']);

    status = 200;
    const again = await services().webhooks.redeliver(tenant, dead!.eventId);
    expect(again).toMatchObject({ eventId: dead!.eventId, state: 'pending', attemptCount: 0, url: r.url, orderReference: reference });
    const hooks = await r.waitForCount(4);
    expect(hooks[3]!.headers['webhook-id']).toBe(dead!.eventId);
    expect(hooks[3]!.body).toBe(hooks[0]!.body);
    expect(verifiesIndependently(m.webhookSecret, hooks[3]!.headers, hooks[3]!.body)).toBe(true);
    const list = await waitFor(
      async () => {
        const l = await deliveriesOf(tenant, { eventId: dead!.eventId });
        return l.length === 2 && l[0]!.state === 'delivered' ? l : null;
      },
      5000,
      'redelivered state',
    );
    expect(list.map((d) => [d.id, d.state])).toEqual([
      [again.id, 'delivered'],
      [dead!.id, 'dead'],
    ]);
    // Nothing arrived between the third attempt and the redelivery, nor after it.
    expect(r.received).toHaveLength(4);
    timeline = await services().timeline.list(tenant, reference);
    expect(timeline.filter((e) => e.event.startsWith('webhook.')).map((e) => e.event)).toEqual(['webhook.failed', 'webhook.delivered']);
  });

  it('refuses to redeliver an unknown event, or one of another merchant, with code 13; needs the private key', async () => {
    const r = await receiver();
    const a = await merchantWith(r);
    const b = await merchantWith(r);
    await payOrder(t.baseUrl, a.m.keys.test);
    const [hook] = await r.waitForCount(1);
    const attempt = (tenant: Tenant, id: string) =>
      services()
        .webhooks.redeliver(tenant, id)
        .then(
          () => null,
          (e: unknown) => e,
        );
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', hook!.json.eventId]) {
      const error = await attempt(b.tenant, id);
      expect(error).toBeInstanceOf(DomainError);
      expect(error).toMatchObject({ kind: 'not_found', code: '13' });
    }
    const publicTenant = await services().auth.authenticate(a.m.keys.test.publicKey);
    expect(await attempt(publicTenant, hook!.json.eventId)).toMatchObject({ kind: 'forbidden' });
    expect(await deliveriesOf(b.tenant, { eventId: hook!.json.eventId })).toEqual([]);
  });

  it('sends a signed test ping with "notify": "test_assess"; no URL is a validation error', async () => {
    const r = await receiver();
    const { m, tenant } = await merchantWith(r);
    const sent = await services().webhooks.sendTestPing(tenant);
    expect(sent).toMatchObject({ notify: 'test_assess', orderReference: null, state: 'pending', url: r.url });
    const [hook] = await r.waitForCount(1);
    expect(hook!.json).toMatchObject({ notify: 'test_assess', eventId: sent.eventId });
    expect(hook!.headers['webhook-id']).toBe(sent.eventId);
    expect(verifiesIndependently(m.webhookSecret, hook!.headers, hook!.body)).toBe(true);

    const none = await merchantWith(null);
    await expect(services().webhooks.sendTestPing(none.tenant)).rejects.toMatchObject({ kind: 'validation', code: 'VAL400' });
    // Removing the URL stops pings too; setting it again (validated) brings them back.
    await services().webhookEndpoints.setWebhookUrl(tenant, null);
    expect(await services().webhookEndpoints.getWebhookUrl(tenant)).toBeNull();
    await expect(services().webhooks.sendTestPing(tenant)).rejects.toMatchObject({ code: 'VAL400' });
    await expect(services().webhookEndpoints.setWebhookUrl(tenant, 'ftp://example.test/')).rejects.toMatchObject({ code: 'VAL400' });
    expect(await services().webhookEndpoints.setWebhookUrl(tenant, r.url)).toBe(r.url);
    await services().webhooks.sendTestPing(tenant);
    await r.waitForCount(2);
  });

  it('numbers each order’s events in sequence and publishes each change to the bus exactly once', async () => {
    const r = await receiver();
    const { m, tenant } = await merchantWith(r);
    const seen: OrderStatusChange[] = [];
    const iterator = services().orderStatusBus.subscribe(tenant.environmentId)[Symbol.asyncIterator]();
    const pump = (async () => {
      for (;;) {
        const next = await iterator.next();
        if (next.done) return;
        seen.push(next.value);
      }
    })();
    const first = await payOrder(t.baseUrl, m.keys.test);
    const second = await payOrder(t.baseUrl, m.keys.test, '4000000000000002');
    await waitFor(() => seen.length >= 4, 5000, 'four bus events');
    await r.waitForCount(2);
    // A later order's changes take the same path: once its settlement is on the bus, a second
    // publication of the earlier changes would have come before it.
    const later = await payOrder(t.baseUrl, m.keys.test);
    await waitFor(() => seen.some((c) => c.reference === later && c.sequence === 2), 10_000, "the later order's settlement");
    await r.waitForCount(3);
    await iterator.return?.();
    await pump;
    seen.splice(0, seen.length, ...seen.filter((c) => c.reference !== later));
    const project = (ref: string) => seen.filter((c) => c.reference === ref).map((c) => [c.sequence, c.status]);
    expect(project(first)).toEqual([
      [1, 'pending authentication'],
      [2, 'Successful'],
    ]);
    expect(project(second)).toEqual([
      [1, 'pending authentication'],
      [2, 'Failed'],
    ]);
    expect(new Set(seen.map((c) => c.eventId)).size).toBe(seen.length);
    // Webhooks carry the settled events only, with their sequence numbers.
    expect(
      r.received
        .filter((h) => h.json.data.orderReference !== later)
        .map((h) => [h.json.data.orderReference, h.json.sequence, h.json.notifyType])
        .sort(),
    ).toEqual(
      [
        [first, 2, 'successful'],
        [second, 2, 'failed'],
      ].sort(),
    );
  });

  it('re-establishes a lost LISTEN connection and still publishes every change once', async () => {
    const fanout = services().eventFanout as PostgresFanout;
    expect(fanout).toBeInstanceOf(PostgresFanout);
    expect(fanout.listening).toBe(true);
    const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
    const backend = async () =>
      (await sql('select pid from pg_stat_activity where application_name = ?', [fanout.applicationName]))[0]?.pid as number | undefined;
    const before = await backend();
    expect(before).toEqual(expect.any(Number));

    const r = await receiver();
    const { m, tenant } = await merchantWith(r);
    const seen: OrderStatusChange[] = [];
    const iterator = services().orderStatusBus.subscribe(tenant.environmentId)[Symbol.asyncIterator]();
    const pump = (async () => {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) seen.push(next.value);
    })();
    // Keep the connection down while the order is paid: its changes are read back from the
    // outbox once the connection is up again.
    let killing = true;
    const killer = (async () => {
      while (killing) {
        await sql('select pg_terminate_backend(pid) from pg_stat_activity where application_name = ?', [fanout.applicationName]);
        await sleep(10);
      }
    })();
    let reference: string;
    try {
      await waitFor(() => !fanout.listening, 5000, 'the LISTEN connection to drop');
      reference = await payOrder(t.baseUrl, m.keys.test);
    } finally {
      killing = false;
      await killer;
    }
    await waitFor(() => seen.length >= 2, 10_000, 'two bus events');
    await waitFor(async () => fanout.listening && (await backend()) !== undefined, 10_000, 'a new LISTEN connection');
    expect(await backend()).not.toBe(before);
    await r.waitForCount(1);
    // A later order's changes, published over the new connection, come after any repeat of the earlier ones.
    const later = await payOrder(t.baseUrl, m.keys.test);
    await waitFor(() => seen.some((c) => c.reference === later && c.sequence === 2), 10_000, "the later order's settlement");
    await iterator.return?.();
    await pump;
    expect(seen.filter((c) => c.reference !== later).map((c) => [c.reference, c.sequence])).toEqual([
      [reference, 1],
      [reference, 2],
    ]);
  });

  it('applies the webhook URL rules to merchant creation and to the settings, in both environments', async () => {
    const create = (input: { webhookUrl?: string; liveWebhookUrl?: string }) =>
      services()
        .merchants.createMerchant({ name: 'Rules Ltd', country: 'NG', supportEmail: 'r@rules.test', ...input })
        .then(
          () => null,
          (e: unknown) => e,
        );
    expect(await create({ liveWebhookUrl: 'http://10.0.0.7/latest' })).toMatchObject({
      code: 'VAL400',
      message: 'The LiveWebhookUrl field must not point to a loopback, private, link-local or other internal address.',
    });
    // Cloud metadata (link-local) and private networks are refused in the test environment too.
    expect(await create({ webhookUrl: 'http://169.254.169.254/latest' })).toMatchObject({
      code: 'VAL400',
      message: 'The WebhookUrl field must not point to a loopback, private, link-local or other internal address.',
    });
    expect(await create({ webhookUrl: 'http://192.168.1.1/' })).toMatchObject({ code: 'VAL400' });
    expect(await create({ webhookUrl: 'ftp://x' })).toMatchObject({ code: 'VAL400', message: 'The WebhookUrl field must be an http or https URL.' });
    // Loopback is exempted in this file (WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8), in both environments alike.
    const created = await services().merchants.createMerchant({
      name: 'Rules Ltd',
      country: 'NG',
      supportEmail: 'r@rules.test',
      webhookUrl: 'http://127.0.0.1:9/hooks',
      liveWebhookUrl: 'https://rules.example.com/hooks',
    });
    const test = await services().auth.authenticate(created.keys.test.privateKey);
    const live = await services().auth.authenticate(created.keys.live.privateKey);
    expect(await services().webhookEndpoints.getWebhookUrl(test)).toBe('http://127.0.0.1:9/hooks');
    expect(await services().webhookEndpoints.getWebhookUrl(live)).toBe('https://rules.example.com/hooks');
    await expect(services().webhookEndpoints.setWebhookUrl(live, 'http://[::1]:8080/')).rejects.toMatchObject({ code: 'VAL400' });
    await expect(services().webhookEndpoints.setWebhookUrl(live, 'http://[fd00::1]:8080/')).rejects.toMatchObject({ code: 'VAL400' });
    expect(await services().webhookEndpoints.setWebhookUrl(live, 'http://127.0.0.1:9/live')).toBe('http://127.0.0.1:9/live');
    await expect(
      services().webhookEndpoints.setWebhookUrl(await services().auth.authenticate(created.keys.live.publicKey), 'https://x.example.com/'),
    ).rejects.toMatchObject({ kind: 'forbidden' });
    expect(await services().webhookEndpoints.setWebhookUrl(live, 'https://rules.example.com/v2')).toBe('https://rules.example.com/v2');
    expect(await services().webhookEndpoints.getWebhookUrl(live)).toBe('https://rules.example.com/v2');
  });

  it('keeps a slow endpoint to 2 requests in flight while others are delivered promptly', async () => {
    const slow = await receiver(() => ({ status: 200, delayMs: 800 }));
    const fast = await receiver();
    const a = await merchantWith(slow);
    const b = await merchantWith(fast);
    for (let i = 0; i < 6; i += 1) await services().webhooks.sendTestPing(a.tenant);
    await services().webhooks.sendTestPing(b.tenant);
    await fast.waitForCount(1);
    // Ordered by events, not by the clock: the other merchant's ping arrived while the slow
    // endpoint still had pings queued (6 at 2 at a time, 800 ms each: about 2.4 s).
    const slowAnsweredBeforeFast = slow.received.length;
    await slow.waitForCount(6, 10_000);
    expect(slow.maxInflight).toBe(2);
    expect(slowAnsweredBeforeFast).toBeLessThan(6);
  });

  it('counts requests in flight per destination (scheme, host, port), not per exact URL', async () => {
    const slow = await receiver(() => ({ status: 200, delayMs: 300 }));
    const base = slow.url.replace(/\/hooks$/, '');
    // Two merchants, each with its own path (and query) on the same server: one allowance of 2 between them.
    const a = await merchantWith(null);
    const b = await merchantWith(null);
    await services().webhookEndpoints.setWebhookUrl(a.tenant, `${base}/a`);
    await services().webhookEndpoints.setWebhookUrl(b.tenant, `${base}/b?x=1`);
    for (let i = 0; i < 3; i += 1) {
      await services().webhooks.sendTestPing(a.tenant);
      await services().webhooks.sendTestPing(b.tenant);
    }
    await slow.waitForCount(6, 5000);
    expect(slow.maxInflight).toBe(2);
  });
});
