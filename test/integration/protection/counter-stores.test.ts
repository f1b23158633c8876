import { Redis } from 'ioredis';
import { MemoryCounterStore, type CounterStore, type Limit } from '../../../src/protection/counter-store';
import { RedisCounterStore } from '../../../src/protection/redis-counter-store';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server';

const PER_IP: Limit = { name: 'ip', max: 2, windowMs: 60_000 };
const PER_LINK: Limit = { name: 'card-link', max: 3, windowMs: 60_000 };

/** What both stores must do alike: the rate limits behave the same whichever holds their counters. */
function behavesAsACounterStore(open: () => Promise<CounterStore>): void {
  let store: CounterStore;
  beforeEach(async () => {
    store = await open();
  });
  afterEach(async () => {
    await store.close();
  });

  it('allows the limit of events per key, then refuses with the seconds left in the window', async () => {
    expect(await store.hit([{ limit: PER_IP, key: 'a' }])).toEqual({ allowed: true });
    expect(await store.hit([{ limit: PER_IP, key: 'a' }])).toEqual({ allowed: true });
    const refused = await store.hit([{ limit: PER_IP, key: 'a' }]);
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: expect.any(Number) });
    expect(refused.allowed || refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.allowed || refused.retryAfterSeconds).toBeLessThanOrEqual(60);
    // Another key, and the same key under another limit, have counters of their own.
    expect(await store.hit([{ limit: PER_IP, key: 'b' }])).toEqual({ allowed: true });
    expect(await store.hit([{ limit: PER_LINK, key: 'a' }])).toEqual({ allowed: true });
  });

  it('counts several limits in order and stops at the first refusal, which the later limits do not count', async () => {
    const attempt = (ip: string) =>
      store.hit([
        { limit: PER_IP, key: ip },
        { limit: PER_LINK, key: 'LINK' },
      ]);
    expect((await attempt('x')).allowed).toBe(true);
    expect((await attempt('x')).allowed).toBe(true);
    // Refused by the per-IP limit, however often: the link's budget is not used up by it.
    for (let i = 0; i < 5; i++) expect((await attempt('x')).allowed).toBe(false);
    expect((await attempt('y')).allowed).toBe(true);
    expect((await attempt('z')).allowed).toBe(false);
  });

  it('checks a key without counting it', async () => {
    expect(await store.check(PER_IP, 'c')).toEqual({ allowed: true });
    await store.hit([{ limit: PER_IP, key: 'c' }]);
    expect(await store.check(PER_IP, 'c')).toEqual({ allowed: true });
    await store.hit([{ limit: PER_IP, key: 'c' }]);
    expect((await store.check(PER_IP, 'c')).allowed).toBe(false);
    expect((await store.check(PER_IP, 'c')).allowed).toBe(false);
  });
}

describe('the in-memory counter store', () => {
  behavesAsACounterStore(async () => new MemoryCounterStore());
});

describeWithRedis('the Redis counter store', () => {
  let redis: RedisServer;
  let inspector: Redis;
  beforeAll(async () => {
    redis = await startRedisServer();
    inspector = new Redis(redis.url, { lazyConnect: true });
    await inspector.connect();
  });
  beforeEach(async () => {
    await inspector.flushall();
  });
  afterAll(async () => {
    await inspector?.quit();
    await redis?.stop();
  });

  const open = () => new RedisCounterStore(redis.url, () => undefined);

  describe('behaves as the in-memory one', () => {
    behavesAsACounterStore(async () => {
      const store = open();
      expect(await store.connected()).toBe(true);
      return store;
    });
  });

  it('keeps each counter under pgw:rl:<limit>:<key>, expiring with its window', async () => {
    const store = open();
    try {
      expect(await store.connected()).toBe(true);
      await store.hit([
        { limit: PER_IP, key: '203.0.113.7' },
        { limit: PER_LINK, key: 'LINK' },
      ]);
      expect((await inspector.keys('*')).sort()).toEqual(['pgw:rl:card-link:LINK', 'pgw:rl:ip:203.0.113.7']);
      expect(await inspector.get('pgw:rl:ip:203.0.113.7')).toBe('1');
      const ttl = await inspector.pttl('pgw:rl:ip:203.0.113.7');
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      await store.close();
    }
  });

  it('rejects a count while its server is down instead of holding it until the server returns', async () => {
    const server = await startRedisServer();
    const store = new RedisCounterStore(server.url, () => undefined);
    try {
      expect(await store.connected()).toBe(true);
      await server.stop();
      await expect(store.hit([{ limit: PER_IP, key: 'a' }])).rejects.toThrow();
      await expect(store.check(PER_IP, 'a')).rejects.toThrow();
    } finally {
      await store.close();
      await server.stop();
    }
  });
});
