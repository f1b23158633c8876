import 'reflect-metadata';
import { Redis } from 'ioredis';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { changeUnheard, expectForbiddenClosedBeforeMissedEvents, openSocketsOnB, statusEvents } from '../../support/outage-sockets';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server';
import { createScratchDatabase, sleep, waitFor } from './helpers';
import { request } from '../../support/http';
import { closedWithin, WsSession } from '../graphql/ws-session';

/**
 * Two instances on one database of this file's own and one Redis carrying their events. While
 * every Redis subscription is cut (the server kills the subscribing connections as fast as they
 * come back), a member is removed and a private key is rotated (no grace period) on instance A
 * and an order is paid: B hears none of it. When B is subscribed again it must check every open
 * socket's key (and dashboard session) before it publishes the events it missed, read back from
 * the outbox.
 */
describeWithRedis('GraphQL WebSockets after an outage of the Redis subscription', () => {
  let redis: RedisServer;
  let admin: Redis;
  let drop: () => Promise<void> = async () => undefined;
  let a: TestService;
  let b: TestService;

  beforeAll(async () => {
    redis = await startRedisServer();
    admin = new Redis(redis.url);
    const scratch = await createScratchDatabase('redis_outage_sockets');
    drop = scratch.drop;
    const env = { DATABASE_URL: scratch.url, REDIS_URL: redis.url, WEBHOOK_CONCURRENCY: '0' };
    a = await startTestService(env);
    b = await startTestService(env);
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await a?.close();
    admin?.disconnect();
    await redis?.stop();
    await drop();
  }, 30_000);

  it('closes (4403) the sockets of a key rotated unheard and of a member removed unheard, before publishing what was missed; the others get every event', async () => {
    const m = await createTestMerchant(a);
    const fanout = b.service.runtime.ctx.services.eventFanout;
    expect(fanout.mode).toBe('redis');
    expect(fanout.hearing).toBe(true);

    // On B: a socket with the private key, one of a member's dashboard session, one with the public key.
    const sockets = await openSocketsOnB(a, b, m, 'leaving@redis-outage.example');
    const during = await changeUnheard(a, m, sockets.member, {
      connection: "B's Redis subscription",
      cut: () => admin.call('client', 'kill', 'type', 'pubsub').catch(() => undefined),
      hearing: () => fanout.hearing,
    });

    // The missed events are read back from the outbox and published on B, to the public key's socket only: the other two are closed first.
    await expectForbiddenClosedBeforeMissedEvents(sockets, during);
    expect(statusEvents(sockets.publicSocket, during).map((msg) => msg.payload.data.orderStatusChanged.status)).toEqual([
      'pending authentication',
      'Successful',
    ]);
    sockets.publicSocket.close();
  }, 60_000);

  it('closes (4403), when its grace period ends, a socket whose key was rotated with a grace period while B did not hear', async () => {
    const m = await createTestMerchant(a);
    const fanout = b.service.runtime.ctx.services.eventFanout;
    const replaced = m.keys.test.privateKey;
    const socket = await WsSession.open(b.baseUrl, { 'api-key': replaced });
    let cutting = true;
    const cutter = (async () => {
      while (cutting) {
        await admin.call('client', 'kill', 'type', 'pubsub').catch(() => undefined);
        await sleep(10);
      }
    })();
    let graceEnds: number;
    try {
      await waitFor(() => !fanout.hearing, 5_000, "B's Redis subscription to drop");
      const rotated = await request(a.baseUrl, 'POST', '/graphql', {
        apiKey: replaced,
        body: { query: 'mutation { rotateKeys(input: { keys: [PRIVATE], graceSeconds: 3 }) { privateKey } }' },
      });
      expect(rotated.body.errors).toBeUndefined();
      graceEnds = Date.now() + 3_000;
    } finally {
      cutting = false;
      await cutter;
    }
    // B's check on reconnecting finds the key still working (its grace): the socket stays open until the grace ends, then closes.
    await waitFor(() => fanout.hearing, 10_000, "B's Redis subscription to return");
    try {
      const closed = await closedWithin(socket, 10_000);
      expect(closed).toEqual({ code: 4403, reason: expect.stringContaining('Forbidden') });
      expect(Date.now()).toBeGreaterThanOrEqual(graceEnds - 1_000);
    } finally {
      socket.close();
    }
  }, 60_000);
});
