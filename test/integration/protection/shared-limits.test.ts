import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server';
import { WsSession } from '../graphql/ws-session';
import { httpFrom, type RawResult } from './raw-http';

const PER_IP = 6;
const PER_KEY = 5;
const CARD_PER_LINK = 4;
const CARD_PER_IP = 3;

const LIMITS = {
  RATE_LIMIT: 'on',
  RATE_LIMIT_PER_IP: String(PER_IP),
  RATE_LIMIT_PER_KEY: String(PER_KEY),
  RATE_LIMIT_CARD_ATTEMPTS_PER_LINK: String(CARD_PER_LINK),
  RATE_LIMIT_CARD_ATTEMPTS_PER_IP: String(CARD_PER_IP),
};

/** Each test acts from its own loopback addresses, so the counters of one test never touch another's. */
let nextHost = 10;
const newClient = () => `127.0.1.${nextHost++}`;

/** Two instances of the service naming one Redis: what a deployment of two machines is. */
async function startPair(redis: RedisServer): Promise<[TestService, TestService]> {
  const env = { ...LIMITS, REDIS_URL: redis.url };
  return [await startTestService(env), await startTestService(env)];
}

const types = (t: TestService, from: string) => httpFrom(t.baseUrl, from, 'GET', '/checkout/links/types');
const pay = (t: TestService, from: string, link: string) => httpFrom(t.baseUrl, from, 'POST', `/pay/${link}`, { body: JSON.stringify({ data: 'x' }) });

/** `n` requests sent one after another, to the two instances in turn. */
async function alternating(n: number, instances: TestService[], send: (t: TestService, i: number) => Promise<RawResult>): Promise<RawResult[]> {
  const out: RawResult[] = [];
  for (let i = 0; i < n; i++) out.push(await send(instances[i % instances.length]!, i));
  return out;
}

/** The value of one series of a counter on an instance's /metrics (0 when it has not been counted). */
async function metric(t: TestService, series: string): Promise<number> {
  const res = await httpFrom(t.baseUrl, '127.0.0.1', 'GET', '/metrics');
  const line = res.text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describeWithRedis('rate limits shared by two instances through Redis', () => {
  let redis: RedisServer;
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    redis = await startRedisServer();
    [a, b] = await startPair(redis);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  it('lets exactly the per-IP number of requests through across both instances', async () => {
    const client = newClient();
    const answers = await alternating(PER_IP * 2, [a, b], (t) => types(t, client));
    const passed = answers.filter((r) => r.status !== 429);
    expect(passed).toHaveLength(PER_IP);
    expect(passed.every((r) => r.status === 401)).toBe(true);
    // Both instances refuse from then on, each telling the same window's end.
    expect(answers.slice(PER_IP).map((r) => r.status)).toEqual(Array(PER_IP).fill(429));
    for (const t of [a, b]) {
      const refused = await types(t, client);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    // Another IP is not slowed.
    expect((await types(b, newClient())).status).toBe(401);
  });

  it('answers a card attempt on one link at most its per-link number of times across both instances, from any addresses', async () => {
    const answers = await alternating(CARD_PER_LINK * 2, [a, b], (t) => pay(t, newClient(), 'SHAREDLINK'));
    expect(answers.filter((r) => r.status !== 429)).toHaveLength(CARD_PER_LINK);
    expect(answers.slice(CARD_PER_LINK).map((r) => r.status)).toEqual(Array(CARD_PER_LINK).fill(429));
    expect(answers[CARD_PER_LINK]!.body).toEqual({ status: 'failed', statusCode: '429', message: 'Too many requests, please try again later' });
  });

  it('limits the card attempts of one IP across both instances, on any links', async () => {
    const client = newClient();
    const answers = await alternating(CARD_PER_IP * 2, [a, b], (t, i) => pay(t, client, `IPLINK${i}`));
    expect(answers.filter((r) => r.status !== 429)).toHaveLength(CARD_PER_IP);
    expect(answers.slice(CARD_PER_IP).map((r) => r.status)).toEqual(Array(CARD_PER_IP).fill(429));
  });

  it('counts operations over a WebSocket on one instance with HTTP requests of the same key on the other', async () => {
    const m = await createTestMerchant(a);
    const key = m.keys.test.privateKey;
    const http = await alternating(3, [a], (t) => httpFrom(t.baseUrl, newClient(), 'GET', '/checkout/links/types', { headers: { 'api-key': key } }));
    expect(http.map((r) => r.status)).toEqual([200, 200, 200]);
    const session = await WsSession.open(b.baseUrl, { 'api-key': key });
    try {
      const codes: string[] = [];
      for (let i = 1; i <= 4; i++) {
        session.subscribe(`q${i}`, '{ __typename }');
        const r = await session.result(`q${i}`);
        codes.push(r.type === 'next' ? 'ok' : String(r.payload?.[0]?.extensions?.code));
      }
      // Five a minute for the key: three went over HTTP to the other instance.
      expect(codes).toEqual(['ok', 'ok', 'RATE_LIMITED', 'RATE_LIMITED']);
    } finally {
      session.close();
    }
  });
});

describeWithRedis('rate limits when their Redis stops', () => {
  let redis: RedisServer;
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    redis = await startRedisServer();
    [a, b] = await startPair(redis);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  it('lets general requests through uncounted and refuses card attempts with 503, counting both in /metrics', async () => {
    // Counted in Redis while it runs.
    const before = newClient();
    const limited = await alternating(PER_IP + 1, [a, b], (t) => types(t, before));
    expect(limited[PER_IP]!.status).toBe(429);

    await redis.stop();

    // The per-IP limit fails open: more than its number of requests pass, on both instances.
    const client = newClient();
    const answers = await alternating(PER_IP * 2, [a, b], (t) => types(t, client));
    expect(answers.map((r) => r.status)).toEqual(Array(PER_IP * 2).fill(401));
    for (const t of [a, b]) expect(await metric(t, 'gateway_rate_limit_store_errors_total{outcome="allowed"}')).toBeGreaterThanOrEqual(PER_IP);

    // A card attempt fails closed: refused, in the route's error shape, with a time to retry.
    for (const t of [a, b]) {
      const refused = await pay(t, newClient(), 'OUTAGELINK');
      expect(refused.status).toBe(503);
      expect(refused.body).toEqual({ status: 'failed', statusCode: '503', message: 'The service is temporarily unavailable, please try again later.' });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(await metric(t, 'gateway_rate_limit_store_errors_total{outcome="refused"}')).toBe(1);
    }
  });
});
