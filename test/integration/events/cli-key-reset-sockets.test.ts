import 'reflect-metadata';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { cli, cliEnvironment } from '../../support/cli';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server';
import { closedWithin, WsSession } from '../graphql/ws-session';

/**
 * `merchant:reset-keys` (a leaked key) runs in a process of its own, beside the running
 * instances: the instances must close the GraphQL WebSockets opened with the replaced key, as
 * they do when the rotation is asked of them, whether their events travel by LISTEN/NOTIFY or
 * through Redis.
 */
async function resetClosesSockets(t: TestService): Promise<void> {
  const m = await createTestMerchant(t);
  const leaked = m.keys.test.privateKey;
  const socket = await WsSession.open(t.baseUrl, { 'api-key': leaked });
  const kept = await WsSession.open(t.baseUrl, { 'api-key': m.keys.test.publicKey });
  try {
    const run = await cli(['merchant:reset-keys', '--id', String(m.subsidiary.id), '--environment', 'test', '--keys', 'private', '--json']);
    expect(run.code).toBe(0);
    expect(await closedWithin(socket, 10_000)).toEqual({ code: 4403, reason: expect.stringContaining('Forbidden') });
    expect((await request(t.baseUrl, 'GET', '/checkout/links/types', { apiKey: leaked })).status).not.toBe(200);
    // The public key was not reset: its socket stays open.
    expect(await closedWithin(kept, 300)).toBeNull();
  } finally {
    socket.close();
    kept.close();
  }
}

describe('merchant:reset-keys beside a running instance (LISTEN/NOTIFY)', () => {
  let t: TestService;
  const env = cliEnvironment('reset-sockets');
  beforeAll(async () => {
    t = await startTestService();
    env.apply();
  }, 60_000);
  afterAll(async () => {
    env.restore();
    await t?.close();
  });

  it('closes (4403) the sockets opened with the reset key, and only those', async () => {
    expect(t.service.runtime.ctx.services.eventFanout.mode).toBe('postgres');
    await resetClosesSockets(t);
  }, 60_000);
});

describeWithRedis('merchant:reset-keys beside a running instance (REDIS_URL)', () => {
  let redis: RedisServer;
  let t: TestService;
  const env = cliEnvironment('reset-sockets-redis');
  beforeAll(async () => {
    redis = await startRedisServer();
    t = await startTestService({ REDIS_URL: redis.url });
    env.apply();
    process.env.REDIS_URL = redis.url;
  }, 60_000);
  afterAll(async () => {
    env.restore();
    await t?.close();
    await redis?.stop();
  });

  it('closes (4403) the sockets opened with the reset key, and only those', async () => {
    expect(t.service.runtime.ctx.services.eventFanout.mode).toBe('redis');
    await resetClosesSockets(t);
  }, 60_000);
});
