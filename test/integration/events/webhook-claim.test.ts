import 'reflect-metadata';
import { Client } from 'pg';
import { claimDueDeliveries } from '../../../src/events/webhook-claim';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { countStatements } from '../../support/statement-count';
import { EVENTS_ENV, createScratchDatabase, payOrder, startReceiver, type Receiver } from './helpers';

/**
 * The claim of due webhook deliveries serialises the instances on a lock. The lock and the
 * claim travel in one message (one round trip, one transaction on the server), so the lock is
 * never held while the claiming instance is between two round trips.
 */
describe('claiming due webhook deliveries', () => {
  let drop: () => Promise<void> = async () => undefined;
  let url = '';
  let t: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    const scratch = await createScratchDatabase('webhook_claim');
    drop = scratch.drop;
    url = scratch.url;
    // No background dispatcher: runOnce() below is the only claimer.
    t = await startTestService({ ...EVENTS_ENV, DATABASE_URL: scratch.url, WEBHOOK_CONCURRENCY: '0' });
    receiver = await startReceiver();
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await drop();
  });

  it('takes the claim lock and the leases in one message, outside any BEGIN, and delivers what it claimed', async () => {
    const m = await createTestMerchant(t, { webhookUrl: receiver.url });
    const reference = await payOrder(t.baseUrl, m.keys.test);
    let attempts = 0;
    const counted = await countStatements(t.service, async () => {
      attempts = await t.service.runtime.ctx.services.webhooks.runOnce();
    });
    expect(attempts).toBe(1);
    expect(receiver.received.map((h) => h.json?.data?.orderReference)).toEqual([reference]);
    const claims = counted.statements.filter((s) => s.includes('pg_advisory_xact_lock'));
    // One claim that found the delivery, one that found nothing left.
    expect(claims).toHaveLength(2);
    for (const claim of claims) expect(claim).toMatch(/^select pg_advisory_xact_lock\(\d+\);[\s\S]*update webhook_delivery d set locked_until/);
    expect(counted.statements.filter((s) => /^(begin|commit)\b/i.test(s))).toEqual([]);
  });

  it("holds a delivery's lease on the database's clock: an instance whose clock runs a minute ahead does not take it while another sends it", async () => {
    const m = await createTestMerchant(t, { webhookUrl: receiver.url });
    const reference = await payOrder(t.baseUrl, m.keys.test);
    const limits = { endpointConcurrency: 2, merchantConcurrency: 2, max: 10 };
    const [a, b] = [new Client({ connectionString: url }), new Client({ connectionString: url })];
    await Promise.all([a.connect(), b.connect()]);
    try {
      // Instance A (a right clock) takes the delivery for 30 s and is still sending it.
      const taken = await claimDueDeliveries(a, new Date(), 30_000, limits);
      expect(taken.map((d) => d.orderReference)).toEqual([reference]);
      const [row] = (await a.query(`select locked_until = $1::timestamptz as exact from webhook_delivery where id = $2`, [taken[0]!.lease, taken[0]!.id])).rows;
      expect(row.exact).toBe(true);
      // Instance B's clock runs 60 s ahead: by its clock the lease has ended, by the database's it has not.
      expect(await claimDueDeliveries(b, new Date(Date.now() + 60_000), 30_000, limits)).toEqual([]);
    } finally {
      // Nothing due is left for the next test: this one's delivery is settled as sent.
      await a.query(`update webhook_delivery set locked_until = null, state = 'delivered', delivered_at = now() where state = 'pending'`);
      await Promise.all([a.end(), b.end()]);
    }
  });

  it('starts a lease when the claim lock is granted, not when the claim was sent: a long wait for the lock does not shorten it', async () => {
    const m = await createTestMerchant(t, { webhookUrl: receiver.url });
    const reference = await payOrder(t.baseUrl, m.keys.test);
    const limits = { endpointConcurrency: 2, merchantConcurrency: 2, max: 10 };
    const [holder, a, b] = [url, url, url].map((connectionString) => new Client({ connectionString }));
    await Promise.all([holder!.connect(), a!.connect(), b!.connect()]);
    try {
      // Another instance's claim holds the claim lock for 1.5 s; A's claim (a 1 s lease) waits behind it.
      await holder!.query('begin');
      const [{ key }] = (await holder!.query(`select pg_advisory_xact_lock(7305114002), 7305114002 as key`)).rows;
      expect(String(key)).toBe('7305114002');
      const claiming = claimDueDeliveries(a!, new Date(), 1_000, limits);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      await holder!.query('commit');
      const taken = await claiming;
      expect(taken.map((d) => d.orderReference)).toEqual([reference]);
      // Right after A's claim its lease still holds: B takes nothing.
      expect(await claimDueDeliveries(b!, new Date(), 1_000, limits)).toEqual([]);
    } finally {
      await a!.query(`update webhook_delivery set locked_until = null, state = 'delivered', delivered_at = now() where state = 'pending'`);
      await Promise.all([holder!.end(), a!.end(), b!.end()]);
    }
  });

  it("takes turns between merchants sharing a destination: one merchant's backlog there does not hold back another merchant's delivery", async () => {
    const shared = await startReceiver();
    try {
      const base = shared.url.replace(/\/hooks$/, '');
      const services = t.service.runtime.ctx.services;
      const a = await services.auth.authenticate((await createTestMerchant(t, { webhookUrl: `${base}/a` })).keys.test.privateKey);
      const b = await services.auth.authenticate((await createTestMerchant(t, { webhookUrl: `${base}/b?x=1` })).keys.test.privateKey);
      const backlog = [];
      for (let i = 0; i < 8; i += 1) backlog.push((await services.webhooks.sendTestPing(a)).eventId);
      const other = (await services.webhooks.sendTestPing(b)).eventId;
      // Each claim takes at most 2 for the destination (WEBHOOK_ENDPOINT_CONCURRENCY) and delivers them before the next.
      expect(await services.webhooks.runOnce()).toBe(9);
      const arrived = shared.received.map((h) => h.headers['webhook-id']);
      expect(new Set(arrived)).toEqual(new Set([...backlog, other]));
      // The other merchant's delivery went in the first claim, beside the backlog's oldest: not after the whole backlog.
      expect(arrived.indexOf(other)).toBeLessThan(2);
    } finally {
      await shared.close();
    }
  });

  it('counts what a merchant already has in flight to a destination as its turns there', async () => {
    const shared = await startReceiver();
    const limits = { endpointConcurrency: 2, merchantConcurrency: 2, max: 1 };
    const claimer = new Client({ connectionString: url });
    await claimer.connect();
    try {
      const services = t.service.runtime.ctx.services;
      const a = await services.auth.authenticate((await createTestMerchant(t, { webhookUrl: shared.url })).keys.test.privateKey);
      const b = await services.auth.authenticate((await createTestMerchant(t, { webhookUrl: shared.url })).keys.test.privateKey);
      const first = await services.webhooks.sendTestPing(a);
      await services.webhooks.sendTestPing(a);
      await services.webhooks.sendTestPing(a);
      const other = await services.webhooks.sendTestPing(b);
      // One at a time: the oldest first; the next free slot is the other merchant's (its first turn), not the first one's second.
      expect((await claimDueDeliveries(claimer, new Date(), 30_000, limits)).map((d) => d.id)).toEqual([first.id]);
      expect((await claimDueDeliveries(claimer, new Date(), 30_000, limits)).map((d) => d.id)).toEqual([other.id]);
    } finally {
      await claimer.query(`update webhook_delivery set locked_until = null, state = 'delivered', delivered_at = now() where state = 'pending'`);
      await claimer.end();
      await shared.close();
    }
  });
});
