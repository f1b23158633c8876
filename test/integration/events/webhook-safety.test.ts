import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { TEST_MASTER_KEY } from '../../support/database';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import type { Tenant } from '../../../src/merchants/tenant';
import { MasterKeyMismatchError } from '../../../src/crypto/master-key';
import { EVENTS_ENV, createScratchDatabase, payOrder, startReceiver, waitFor, type Receiver } from './helpers';

const { WEBHOOK_ALLOWED_NETWORKS: _exempted, ...STRICT_ENV } = EVENTS_ENV;
const REFUSED = 'The WebhookUrl field must not point to a loopback, private, link-local or other internal address.';

/**
 * Issue 10 (webhooks), points 12 to 14, on a database of this file's own: the address rule
 * without any exemption (the receivers on loopback must never be reached), one merchant
 * unable to starve another, and the master-key check at start. One service at a time.
 */
describe('webhook safety', () => {
  let scratchUrl: string;
  let dropDatabase: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    const scratch = await createScratchDatabase('events_safety');
    scratchUrl = scratch.url;
    dropDatabase = scratch.drop;
  }, 30_000);
  afterAll(async () => {
    await dropDatabase();
  });

  describe('without WEBHOOK_ALLOWED_NETWORKS', () => {
    let t: TestService;
    const receivers: Receiver[] = [];
    beforeAll(async () => {
      t = await startTestService({ ...STRICT_ENV, DATABASE_URL: scratchUrl });
    }, 30_000);
    afterAll(async () => {
      await Promise.all(receivers.map((r) => r.close()));
      // Nothing of this block is left for the next service on this database to deliver.
      await t?.service.runtime.ctx.orm.em.getConnection().execute(`update webhook_delivery set state = 'dead' where state = 'pending'`);
      await t?.close();
    });
    const services = () => t.service.runtime.ctx.services;
    const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
    async function receiver(): Promise<Receiver> {
      const r = await startReceiver();
      receivers.push(r);
      return r;
    }

    it('refuses loopback URLs when they are set, in the test environment as in live, whatever their spelling', async () => {
      const r = await receiver();
      const port = new URL(r.url).port;
      const m = await createTestMerchant(t);
      for (const mode of ['test', 'live'] as const) {
        const tenant = await services().auth.authenticate(m.keys[mode].privateKey);
        for (const host of [
          '127.0.0.1',
          'localhost',
          '[::ffff:127.0.0.1]',
          '[::ffff:7f00:1]',
          '2130706433',
          '0x7f.1',
          '017700000001',
          '[::1]',
          '10.0.0.1',
          '169.254.169.254',
        ]) {
          await expect(services().webhookEndpoints.setWebhookUrl(tenant, `http://${host}:${port}/hooks`)).rejects.toMatchObject({
            code: 'VAL400',
            message: REFUSED,
          });
        }
        expect(await services().webhookEndpoints.getWebhookUrl(tenant)).toBeNull();
      }
      await expect(
        services().merchants.createMerchant({ name: 'Loop Ltd', country: 'NG', supportEmail: 'l@loop.test', webhookUrl: r.url }),
      ).rejects.toMatchObject({ code: 'VAL400', message: REFUSED });
      expect(r.received).toHaveLength(0);
    });

    it('skips at delivery a stored URL that is, or resolves to, an internal address (test environment), keeping no response', async () => {
      const r = await receiver();
      const port = new URL(r.url).port;
      const hosts = [`localhost:${port}`, `127.0.0.1:${port}`, `[::ffff:127.0.0.1]:${port}`];
      const tenants: Tenant[] = [];
      for (const host of hosts) {
        const m = await createTestMerchant(t);
        const tenant: Tenant = await services().auth.authenticate(m.keys.test.privateKey);
        tenants.push(tenant);
        // Stored as it could have been before the rule (or resolved elsewhere when it was set).
        await sql(`insert into webhook_endpoint (environment_id, url, is_active) values (?, ?, true)`, [tenant.environmentId, `http://${host}/hooks`]);
        const reference = await payOrder(t.baseUrl, m.keys.test);
        const ping = await services().webhooks.sendTestPing(tenant);
        for (const filter of [{ orderReference: reference }, { eventId: ping.eventId }]) {
          const [delivery] = await waitFor(
            async () => {
              const list = await services().webhooks.listDeliveries(tenant, filter);
              return list[0] && list[0].attempts.length > 0 ? list : null;
            },
            10_000,
            `an attempt to ${host}`,
          );
          expect(delivery!.state).not.toBe('delivered');
          expect(delivery!.attempts[0]).toMatchObject({ statusCode: null, responseBody: null, error: expect.stringMatching(/^refused: .*non-public address/) });
        }
      }
      // Every delivery ends dead, each of its attempts refused: none is left to reach the receiver.
      for (const tenant of tenants) {
        const deliveries = await waitFor(
          async () => {
            const list = await services().webhooks.listDeliveries(tenant, {});
            return list.length === 2 && list.every((d) => d.state === 'dead') ? list : null;
          },
          10_000,
          'every delivery dead',
        );
        for (const d of deliveries) expect(d.attempts.map((a) => a.error)).toEqual(Array(3).fill(expect.stringMatching(/^refused: /)));
      }
      expect(r.received).toHaveLength(0);
    });
  });

  describe('one merchant cannot starve the others', () => {
    let t: TestService;
    const receivers: Receiver[] = [];
    beforeAll(async () => {
      // Four workers, a 10 s deadline per attempt: a hanging receiver holds a worker for 10 s.
      t = await startTestService({ ...EVENTS_ENV, DATABASE_URL: scratchUrl, WEBHOOK_CONCURRENCY: '4', WEBHOOK_TIMEOUT_MS: '10000' });
    }, 30_000);
    afterAll(async () => {
      // Receivers first: the hanging requests end at once instead of at their deadline.
      await Promise.all(receivers.map((r) => r.close()));
      await t?.close();
    }, 30_000);
    const services = () => t.service.runtime.ctx.services;
    async function receiver(reply?: Receiver['reply']): Promise<Receiver> {
      const r = await startReceiver(reply);
      receivers.push(r);
      return r;
    }
    async function merchantAt(url: string): Promise<{ m: CreatedMerchant; tenant: Tenant }> {
      const m = await createTestMerchant(t, { webhookUrl: url });
      return { m, tenant: await services().auth.authenticate(m.keys.test.privateKey) };
    }

    it('a merchant whose receiver hangs, pinging under several URLs, does not delay another merchant', async () => {
      const hanging = await receiver(() => 'hang');
      const healthy = await receiver();
      const port = new URL(hanging.url).port;
      const a = await merchantAt(hanging.url);
      const b = await merchantAt(healthy.url);
      // Two pings to each of four URLs of the same hanging server (two host names, two paths).
      for (const url of [`http://127.0.0.1:${port}/a`, `http://127.0.0.1:${port}/b`, `http://localhost:${port}/c`, `http://localhost:${port}/d`]) {
        await services().webhookEndpoints.setWebhookUrl(a.tenant, url);
        await services().webhooks.sendTestPing(a.tenant);
        await services().webhooks.sendTestPing(a.tenant);
      }
      await hanging.waitForCount(2, 5000);

      await services().webhooks.sendTestPing(b.tenant);
      await healthy.waitForCount(1, 9000);
      // The other merchant's ping arrived while the hanging requests were still held open: no
      // attempt of the hanging merchant has ended (each ends only at its 10 s deadline).
      const held = await services().webhooks.listDeliveries(a.tenant, {});
      expect(held).toHaveLength(8);
      expect(held.flatMap((d) => d.attempts)).toEqual([]);
      // The hanging merchant holds at most its share (2 of 4 workers here), never the whole dispatcher.
      expect(hanging.received.length).toBeLessThanOrEqual(2);
      expect(hanging.maxInflight).toBeLessThanOrEqual(2);
    }, 20_000);

    it('limits test pings per environment with a clear error, without touching other environments', async () => {
      const r = await receiver();
      const a = await merchantAt(r.url);
      const b = await merchantAt(r.url);
      for (let i = 0; i < 10; i += 1) await services().webhooks.sendTestPing(a.tenant);
      const refused = await services()
        .webhooks.sendTestPing(a.tenant)
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(refused).toMatchObject({
        code: 'RATE_LIMITED',
        message: expect.stringMatching(/^Too many test webhooks: at most 10 a minute for this environment\. Try again in \d+ seconds\.$/),
      });
      // Concurrent requests are counted one after the other: none gets past the limit.
      const burst = await Promise.allSettled(Array.from({ length: 5 }, () => services().webhooks.sendTestPing(a.tenant)));
      expect(burst.every((s) => s.status === 'rejected')).toBe(true);
      await expect(services().webhooks.sendTestPing(b.tenant)).resolves.toMatchObject({ notify: 'test_assess' });
      // Order events are never limited.
      await payOrder(t.baseUrl, a.m.keys.test);
      await r.waitForCount(12, 10_000);
    }, 20_000);
  });

  describe('the master key check', () => {
    const OTHER_KEY = 'ab'.repeat(32);

    it('refuses to start with another MASTER_KEY, with a clear message, and starts again with the right one', async () => {
      // The services above stored the check value at their first start, under the test key.
      const wrong = await startTestService({ DATABASE_URL: scratchUrl, MASTER_KEY: OTHER_KEY }).then(
        async (s) => {
          await s.close();
          return null;
        },
        (e: unknown) => e,
      );
      expect(wrong).toBeInstanceOf(MasterKeyMismatchError);
      expect((wrong as Error).message).toMatch(/^MASTER_KEY does not match this database: /);
      expect((wrong as Error).message).not.toContain(OTHER_KEY);

      const right = await startTestService({ DATABASE_URL: scratchUrl, MASTER_KEY: TEST_MASTER_KEY });
      expect((await fetch(`${right.baseUrl}/health`)).status).toBe(200);
      // A database whose secrets predate the check value: the first start must open one of them before storing it.
      await right.service.runtime.ctx.orm.em.getConnection().execute('delete from master_key_check');
      await right.close();
      await expect(startTestService({ DATABASE_URL: scratchUrl, MASTER_KEY: OTHER_KEY })).rejects.toThrow(
        'MASTER_KEY does not match this database: a secret already stored in the database does not open with it.',
      );
      const again = await startTestService({ DATABASE_URL: scratchUrl, MASTER_KEY: TEST_MASTER_KEY });
      const [row] = await again.service.runtime.ctx.orm.em.getConnection().execute('select check_value from master_key_check');
      expect(row.check_value).toMatch(/^v1\./);
      await again.close();
    }, 30_000);
  });
});
