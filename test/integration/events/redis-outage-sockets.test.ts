import 'reflect-metadata';
import { Redis } from 'ioredis';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { addMember, signInMember } from '../../support/members';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server';
import { closedWithin, WsSession } from '../graphql/ws-session';
import { createScratchDatabase, payOrder, sleep, waitFor } from './helpers';

const STATUS = 'subscription { orderStatusChanged { reference statusId status } }';

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

  const events = (s: WsSession, reference: string) =>
    s.messages.filter((msg) => msg.type === 'next' && msg.payload?.data?.orderStatusChanged?.reference === reference);

  it('closes (4403) the sockets of a key rotated unheard and of a member removed unheard, before publishing what was missed; the others get every event', async () => {
    const m = await createTestMerchant(a);
    const fanout = b.service.runtime.ctx.services.eventFanout;
    expect(fanout.mode).toBe('redis');
    expect(fanout.hearing).toBe(true);

    const member = await addMember(a.baseUrl, m.keys.test.privateKey, 'leaving@redis-outage.example', 'SUPPORT');
    const privateSocket = await WsSession.open(b.baseUrl, { 'api-key': m.keys.test.privateKey });
    const signedIn = await signInMember(b.baseUrl, member);
    const sessionSocket = await WsSession.open(
      b.baseUrl,
      { 'csrf-token': signedIn.body.csrfToken, environment: 'test' },
      { cookie: signedIn.cookie, origin: b.baseUrl },
    );
    const publicSocket = await WsSession.open(b.baseUrl, { 'api-key': m.keys.test.publicKey });
    const sockets = [privateSocket, sessionSocket, publicSocket];
    for (const s of sockets) s.subscribe('status', STATUS);
    // Every subscription is live: an order paid on A reaches all three through Redis and B.
    const before = await payOrder(a.baseUrl, m.keys.test);
    for (const s of sockets) await waitFor(() => events(s, before).length >= 2, 10_000, 'the first order on every socket');

    let killing = true;
    const killer = (async () => {
      while (killing) {
        await admin.call('client', 'kill', 'type', 'pubsub').catch(() => undefined);
        await sleep(10);
      }
    })();
    let during: string;
    try {
      await waitFor(() => !fanout.hearing, 5_000, "B's Redis subscription to drop");
      const removed = await request(a.baseUrl, 'POST', '/graphql', {
        apiKey: m.keys.test.privateKey,
        body: { query: `mutation { removeMember(email: "${member.email}") }` },
      });
      expect(removed.body.data.removeMember).toBe(true);
      const rotated = await request(a.baseUrl, 'POST', '/graphql', {
        apiKey: m.keys.test.privateKey,
        body: { query: 'mutation { rotateKeys(input: { keys: [PRIVATE], graceSeconds: 0 }) { privateKey } }' },
      });
      expect(rotated.body.errors).toBeUndefined();
      during = await payOrder(a.baseUrl, m.keys.test);
    } finally {
      killing = false;
      await killer;
    }
    await waitFor(() => fanout.hearing, 10_000, "B's Redis subscription to return");

    // The missed events are read back from the outbox and published on B (the public key's socket gets them)...
    await waitFor(() => events(publicSocket, during).length >= 2, 10_000, 'the missed events on the public socket');
    expect(events(publicSocket, during).map((msg) => msg.payload.data.orderStatusChanged.status)).toEqual(['pending authentication', 'Successful']);
    // ...but the sockets of the rotated key and of the removed member's session were closed first and got none.
    for (const s of [privateSocket, sessionSocket]) {
      expect(await closedWithin(s, 5_000)).toEqual({ code: 4403, reason: expect.stringContaining('Forbidden') });
      expect(events(s, during)).toEqual([]);
    }
    expect(publicSocket.isOpen).toBe(true);
    publicSocket.close();
  }, 60_000);
});
