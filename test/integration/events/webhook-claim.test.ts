import 'reflect-metadata';
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
  let t: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    const scratch = await createScratchDatabase('webhook_claim');
    drop = scratch.drop;
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
});
