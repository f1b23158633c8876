import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { startDnsServer, type DnsServer } from '../../support/dns-server';
import type { Tenant } from '../../../src/merchants/tenant';
import { OutboxService } from '../../../src/events/outbox.service';
import { WebhookDispatcher, type WebhookAttemptOutcome } from '../../../src/events/webhook-dispatcher';
import { EVENTS_ENV, createScratchDatabase, startReceiver, waitFor, type Receiver } from './helpers';

const DNS_DEADLINE_MS = 3000;
const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Webhook hosts are resolved by DNS queries with a deadline, on a nameserver of the test's own
 * (loopback UDP) that answers some merchants' hosts (one with a private address) and never
 * answers for another's. The service's own dispatcher is off; a dispatcher made here, on the
 * same database, delivers, and logs to the test.
 */
describe('webhook host resolution', () => {
  let t: TestService;
  let drop: () => Promise<void> = async () => undefined;
  let nameserver: DnsServer;
  let dispatcher: WebhookDispatcher;
  const receivers: Receiver[] = [];
  const warnings: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    const scratch = await createScratchDatabase('events_dns');
    drop = scratch.drop;
    t = await startTestService({ ...EVENTS_ENV, DATABASE_URL: scratch.url, WEBHOOK_CONCURRENCY: '0' });
    nameserver = await startDnsServer({ 'hooks.b.test': ['127.0.0.1'], 'intranet.c.test': ['10.0.0.5'] }, ['stalled.a.test']);
    const { services, orm, clock } = t.service.runtime.ctx;
    dispatcher = new WebhookDispatcher(
      orm,
      new OutboxService(t.config.publicUrl, clock),
      services.signingSecrets,
      clock,
      {
        // A failed attempt is due again only much later: the test sees it scheduled, not repeated.
        retryDelaysMs: [600_000],
        timeoutMs: DELIVERY_TIMEOUT_MS,
        concurrency: 4,
        endpointConcurrency: 2,
        merchantConcurrency: 2,
        testPingsPerMinute: 10,
        pollIntervalMs: 200,
        urlPolicy: { allowedNetworks: ['127.0.0.0/8'] },
        dns: { servers: [nameserver.address], timeoutMs: DNS_DEADLINE_MS, tries: 1 },
      },
      services.reads,
    );
    dispatcher.start({ info: () => undefined, warn: (obj, msg) => warnings.push({ ...obj, msg }), error: () => undefined });
  }, 60_000);

  afterAll(async () => {
    await dispatcher?.stop();
    await Promise.all(receivers.map((r) => r.close()));
    await nameserver?.close();
    await t?.close();
    await drop();
  });

  const services = () => t.service.runtime.ctx.services;
  async function merchantAt(url: string): Promise<Tenant> {
    const m = await createTestMerchant(t);
    const tenant = await services().auth.authenticate(m.keys.test.privateKey);
    // Stored as set: its host is known only to the test's nameserver, which the service's own URL check does not ask.
    await t.service.runtime.ctx.orm.em
      .getConnection()
      .execute(`insert into webhook_endpoint (environment_id, url, is_active) values (?, ?, true)`, [tenant.environmentId, url]);
    return tenant;
  }

  it("a host whose nameserver never answers fails at the DNS deadline as a retryable attempt, while another merchant's deliveries proceed", async () => {
    const unreached = await startReceiver();
    const healthy = await startReceiver();
    receivers.push(unreached, healthy);
    const a = await merchantAt(`http://stalled.a.test:${new URL(unreached.url).port}/hooks`);
    const b = await merchantAt(`http://hooks.b.test:${new URL(healthy.url).port}/hooks`);
    const outcomes: WebhookAttemptOutcome[] = [];
    dispatcher.onAttempt((outcome) => outcomes.push(outcome));

    const stalled = [await services().webhooks.sendTestPing(a), await services().webhooks.sendTestPing(a)];
    dispatcher.wake();
    await nameserver.asked('stalled.a.test');

    // While the stalled merchant's host is still being resolved, the other merchant's ping is sent and arrives.
    const ping = await services().webhooks.sendTestPing(b);
    dispatcher.wake();
    const [hook] = await healthy.waitForCount(1);
    expect(hook!.headers['webhook-id']).toBe(ping.eventId);
    expect((await services().webhooks.listDeliveries(a, {})).flatMap((d) => d.attempts)).toEqual([]);

    // Then the stalled look-up ends at its deadline: each attempt fails, to be tried again later.
    await waitFor(() => stalled.every((d) => outcomes.some((o) => o.deliveryId === d.id)), 15_000, 'the stalled attempts to end');
    expect(outcomes.filter((o) => stalled.some((d) => d.id === o.deliveryId)).map((o) => o.result)).toEqual(['retry', 'retry']);
    const deliveries = await services().webhooks.listDeliveries(a, {});
    for (const d of deliveries) {
      expect(d).toMatchObject({ state: 'pending', attemptCount: 1, nextAttemptAt: expect.any(Date) });
      expect(d.attempts).toEqual([
        expect.objectContaining({ statusCode: null, responseBody: null, error: `ETIMEOUT: stalled.a.test did not resolve within ${DNS_DEADLINE_MS} ms` }),
      ]);
      expect(d.attempts[0]!.latencyMs).toBeLessThan(DELIVERY_TIMEOUT_MS);
    }
    expect(unreached.received).toEqual([]);
  }, 30_000);

  it("refuses a host that resolves to a private address with a message that does not name the address, which only the operators' log shows", async () => {
    const unreached = await startReceiver();
    receivers.push(unreached);
    const c = await merchantAt(`http://intranet.c.test:${new URL(unreached.url).port}/hooks?token=secret`);
    const ping = await services().webhooks.sendTestPing(c);
    dispatcher.wake();
    const [delivery] = await waitFor(
      async () => {
        const list = await services().webhooks.listDeliveries(c, { eventId: ping.eventId });
        return list[0]?.attempts.length ? list : null;
      },
      10_000,
      'the refused attempt',
    );
    expect(delivery!.attempts[0]).toMatchObject({ statusCode: null, error: 'refused: intranet.c.test resolves to a non-public address' });
    expect(JSON.stringify(delivery)).not.toContain('10.0.0.5');
    expect(warnings.filter((w) => w.deliveryId === ping.id)).toEqual([
      {
        msg: 'webhook destination refused: non-public address',
        deliveryId: ping.id,
        subsidiaryId: c.subsidiaryId,
        destination: `http://intranet.c.test:${new URL(unreached.url).port}`,
        addresses: ['10.0.0.5'],
      },
    ]);
    expect(unreached.received).toEqual([]);
  });
});
