import 'reflect-metadata';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server';
import { EVENTS_ENV, createScratchDatabase, payOrder, startReceiver, waitFor, type Receiver } from './helpers';

/**
 * With REDIS_URL the database sends no NOTIFY: a settlement's webhook delivery is announced to
 * the other instances by the Redis message the writer publishes after commit. Here the writer
 * (A) delivers no webhooks at all, and the other instance (B) would look for due deliveries on
 * its own only every ten minutes: the webhook arrives only if A's message wakes B's dispatcher.
 */
describeWithRedis('a webhook delivery written on one instance, with Redis carrying the events', () => {
  let redis: RedisServer;
  let drop: () => Promise<void> = async () => undefined;
  let a: TestService;
  let b: TestService;
  let receiver: Receiver;

  beforeAll(async () => {
    redis = await startRedisServer();
    const scratch = await createScratchDatabase('redis_webhook_wake');
    drop = scratch.drop;
    const env = { ...EVENTS_ENV, DATABASE_URL: scratch.url, REDIS_URL: redis.url };
    [a, b] = await Promise.all([
      startTestService({ ...env, WEBHOOK_CONCURRENCY: '0' }),
      startTestService({ ...env, WEBHOOK_CONCURRENCY: '2', WEBHOOK_POLL_INTERVAL_MS: '600000' }),
    ]);
    receiver = await startReceiver();
  }, 60_000);

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await receiver?.close();
    await redis?.stop();
    await drop();
  }, 30_000);

  it("wakes the other instance's dispatcher through Redis, which delivers the settlement's webhook without waiting for its poll", async () => {
    expect(a.service.runtime.ctx.services.eventFanout.mode).toBe('redis');
    const m = await createTestMerchant(a, { webhookUrl: receiver.url });
    const reference = await payOrder(a.baseUrl, m.keys.test);
    const hook = await waitFor(() => receiver.received.find((h) => h.json?.data?.orderReference === reference), 20_000, "the settlement's webhook");
    expect([hook.json.notifyType, hook.json.data.statusId]).toEqual(['successful', 5]);
  }, 60_000);
});
