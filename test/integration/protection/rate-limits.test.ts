import WebSocket from 'ws';
import { startTestService, TEST_ADMIN_TOKEN, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { httpFrom, type RawResult } from './raw-http';

const TOO_MANY = { status: 'failed', statusCode: '429', message: 'Too many requests, please try again later' };
const WRONG_KEY = 'PGW-SECRETKEY-TEST-' + '0'.repeat(32);

/** Each test acts from its own loopback address, so the counters of one test never touch another's. */
let nextHost = 10;
const newClient = () => `127.0.0.${nextHost++}`;

function expectTooMany(res: RawResult): void {
  expect(res.status).toBe(429);
  expect(res.body).toEqual(TOO_MANY);
  const retryAfter = Number(res.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

async function times<T>(n: number, fn: () => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(await fn());
  return out;
}

describe('rate limits', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let other: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestService({
      RATE_LIMIT: 'on',
      RATE_LIMIT_PER_KEY: '8',
      RATE_LIMIT_PER_IP: '5',
      RATE_LIMIT_AUTH_FAILURES: '3',
      RATE_LIMIT_CARD_ATTEMPTS_PER_LINK: '4',
      RATE_LIMIT_CARD_ATTEMPTS_PER_IP: '2',
    });
    m = await createTestMerchant(t);
    other = await createTestMerchant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const types = (from: string, apiKey?: string) => httpFrom(t.baseUrl, from, 'GET', '/checkout/links/types', { headers: apiKey ? { 'api-key': apiKey } : {} });
  const gql = (from: string, headers: Record<string, string> = {}, query = '{ __typename }') =>
    httpFrom(t.baseUrl, from, 'POST', '/graphql', { headers, body: JSON.stringify({ query }) });

  it('requests without a key are limited per IP, with the 429 shape and Retry-After; another IP goes on', async () => {
    const a = newClient();
    const first = await times(5, () => types(a));
    expect(first.map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
    expectTooMany(await types(a));
    expectTooMany(await httpFrom(t.baseUrl, a, 'GET', '/pay/anything'));
    const b = newClient();
    expect((await types(b)).status).toBe(401);
    // A valid key is not slowed by its IP's limit.
    expect((await types(a, m.keys.test.publicKey)).status).toBe(200);
  });

  it('requests with a valid key are limited per key; another key, same IP, goes on', async () => {
    const a = newClient();
    const key = m.keys.live.publicKey;
    const ok = await times(8, () => types(a, key));
    expect(ok.map((r) => r.status)).toEqual(Array(8).fill(200));
    expectTooMany(await types(a, key));
    // The key is limited everywhere, whichever IP presents it.
    expectTooMany(await types(newClient(), key));
    expect((await types(a, other.keys.live.publicKey)).status).toBe(200);
    // Requests with a valid key did not use the IP's budget for requests without one.
    expect((await types(a)).status).toBe(401);
  });

  it('failed api-key attempts are limited per IP: further guesses get 429 unanswered', async () => {
    const a = newClient();
    const guesses = await times(3, () => types(a, WRONG_KEY.replace(/0$/, String(Math.floor(Math.random() * 10)))));
    expect(guesses.map((r) => r.status)).toEqual([401, 401, 401]);
    expectTooMany(await types(a, 'PGW-PUBLICKEY-TEST-' + 'a'.repeat(32)));
    // Even a real key is not looked up for that IP now: the answer must not tell guesses apart.
    expectTooMany(await types(a, other.keys.test.privateKey));
    // Another IP is not slowed.
    expect((await types(newClient(), WRONG_KEY)).status).toBe(401);
  });

  it('failed authentication on /graphql counts too and answers RATE_LIMITED', async () => {
    const a = newClient();
    const q = '{ paymentLinks(first: 1) { totalCount } }';
    for (let i = 0; i < 3; i++) {
      const r = await gql(a, { 'api-key': WRONG_KEY }, q);
      expect(r.status).toBe(200);
      expect(r.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
    const limited = await gql(a, { 'api-key': WRONG_KEY }, q);
    expect(limited.status).toBe(429);
    expect(limited.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
  });

  it('wrong x-admin-token attempts count as failed authentications', async () => {
    const a = newClient();
    const mutation = 'mutation { createMerchant(input: { name: "X", country: "NG", supportEmail: "x@x.test" }) { subsidiary { id } } }';
    for (let i = 0; i < 3; i++) expect((await gql(a, { 'x-admin-token': 'not-the-admin-token-' + i }, mutation)).status).toBeLessThan(429);
    const limited = await gql(a, { 'x-admin-token': 'not-the-admin-token-x' }, mutation);
    expect(limited.status).toBe(429);
    expect(limited.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    // The right token from another IP is not counted as a failure.
    const b = newClient();
    for (let i = 0; i < 4; i++) expect((await gql(b, { 'x-admin-token': TEST_ADMIN_TOKEN })).status).toBe(200);
  });

  it('the GraphQL HTTP path is limited per key and per IP with RATE_LIMITED', async () => {
    const a = newClient();
    for (let i = 0; i < 5; i++) expect((await gql(a)).status).toBe(200);
    const byIp = await gql(a);
    expect(byIp.status).toBe(429);
    expect(byIp.body).toEqual({
      errors: [{ message: 'Too many requests, please try again later', extensions: { code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) } }],
    });
    const key = other.keys.test.publicKey;
    for (let i = 0; i < 8; i++) expect((await gql(a, { 'api-key': key })).status).toBe(200);
    const byKey = await gql(a, { 'api-key': key });
    expect(byKey.status).toBe(429);
    expect(byKey.body.errors[0].extensions.code).toBe('RATE_LIMITED');
  });

  const wsConnect = (from: string, apiKey: string) =>
    new Promise<{ opened: boolean; status?: number; closeCode?: number }>((resolve) => {
      const ws = new WebSocket(`${t.baseUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', { localAddress: from });
      ws.on('unexpected-response', (_req, res) => {
        resolve({ opened: false, status: res.statusCode });
        res.resume();
        ws.terminate();
      });
      ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { 'api-key': apiKey } })));
      ws.on('message', () => ws.close());
      ws.on('close', (code) => resolve({ opened: true, closeCode: code }));
      ws.on('error', () => undefined);
    });

  it('WebSocket connection attempts are limited per IP', async () => {
    const a = newClient();
    const results = await times(6, () => wsConnect(a, m.keys.test.publicKey));
    expect(results.slice(0, 5).every((r) => r.opened)).toBe(true);
    expect(results[5]).toEqual({ opened: false, status: 429 });
    expect((await wsConnect(newClient(), m.keys.test.publicKey)).opened).toBe(true);
  });

  it('a WebSocket with a wrong key counts as a failed authentication', async () => {
    const a = newClient();
    const failed = await times(3, () => wsConnect(a, WRONG_KEY));
    expect(failed.map((r) => r.closeCode)).toEqual([4403, 4403, 4403]);
    expect(await wsConnect(a, m.keys.test.publicKey)).toEqual({ opened: false, status: 429 });
  });

  it('card attempts on a payment link page are limited per IP and per link', async () => {
    const pay = (from: string, link: string, headers: Record<string, string> = {}) =>
      httpFrom(t.baseUrl, from, 'POST', `/pay/${link}`, { body: JSON.stringify({ data: 'x' }), headers });
    const a = newClient();
    expect((await pay(a, 'LINKONE')).status).toBeLessThan(429);
    expect((await pay(a, 'LINKONE')).status).toBeLessThan(429);
    expectTooMany(await pay(a, 'LINKONE'));
    // A merchant's public key (public by nature) does not lift the limit.
    expectTooMany(await pay(a, 'LINKONE', { 'api-key': other.keys.live.publicKey }));
    // Card testing spread over many addresses still meets the per-link limit (4 a minute).
    expect((await pay(newClient(), 'LINKTWO')).status).toBeLessThan(429);
    expect((await pay(newClient(), 'LINKTWO')).status).toBeLessThan(429);
    expect((await pay(newClient(), 'LINKTWO')).status).toBeLessThan(429);
    expect((await pay(newClient(), 'LINKTWO')).status).toBeLessThan(429);
    expectTooMany(await pay(newClient(), 'LINKTWO'));
    // The counter is the link the router matched, as the handler reads it: a query string is the same link.
    expectTooMany(await pay(newClient(), 'LINKTWO?x=1'));
    expect((await pay(newClient(), 'LINKTHREE')).status).toBeLessThan(429);
    // The page itself (GET) is not a card attempt.
    expect((await httpFrom(t.baseUrl, newClient(), 'GET', '/pay/LINKTWO')).status).toBe(404);
  });
});

describe('card-attempt limits over every spelling of the payment page', () => {
  let t: TestService;
  let linkReference: string;
  const CAP = 4;
  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT: 'on', RATE_LIMIT_CARD_ATTEMPTS_PER_LINK: String(CAP), RATE_LIMIT_CARD_ATTEMPTS_PER_IP: '2' });
    const m = await createTestMerchant(t);
    const link = await httpFrom(t.baseUrl, newClient(), 'POST', '/checkout/links/create', {
      headers: { 'api-key': m.keys.test.privateKey },
      body: JSON.stringify({ Name: 'Card testing target', Description: 'x', PaymentType: 'MC', Currency: 'NGN', AuthOption: 'NOAUTH', Amount: 1000 }),
    });
    linkReference = link.body.data.paymentLink.reference;
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers a card attempt on a link at most its per-link number of times, whatever the spelling and source address', async () => {
    const [first, ...rest] = linkReference;
    const encodedFirst = `%${first.charCodeAt(0).toString(16).toUpperCase()}${rest.join('')}`;
    const spellings = [
      `/pay/${linkReference}`,
      `${t.baseUrl}/pay/${linkReference}`,
      `/%70ay/${linkReference}`,
      `/p%61y/${linkReference}`,
      `/pay/${encodedFirst}`,
      `http://127.0.0.1/pay/${linkReference}`,
      `/pay/${linkReference}?again=1`,
    ];
    const answers: { spelling: string; status: number; answeredByPage: boolean }[] = [];
    for (let round = 0; round < 3; round++) {
      for (const spelling of spellings) {
        const res = await httpFrom(t.baseUrl, newClient(), 'POST', spelling, { body: JSON.stringify({ data: 'not a ciphertext' }) });
        // The page's own answer to a card attempt is JSON with a message (approved, declined, unreadable card...).
        answers.push({
          spelling,
          status: res.status,
          answeredByPage: res.status !== 429 && typeof res.body?.message === 'string' && res.body.status === undefined,
        });
      }
    }
    expect(answers.filter((a) => a.answeredByPage)).toHaveLength(CAP);
    // Every other spelling is refused before it is counted or answered; the plain ones beyond the cap get 429.
    for (const a of answers.filter((x) => !x.answeredByPage))
      expect({ spelling: a.spelling, status: [400, 429].includes(a.status) }).toEqual({ spelling: a.spelling, status: true });
    expect(answers.filter((a) => a.status === 400 && !a.answeredByPage).map((a) => a.spelling)).toEqual(
      [0, 1, 2].flatMap(() => spellings.filter((s) => s.includes('%') || s.startsWith('http'))),
    );
  });
});

describe('RATE_LIMIT=off', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT: 'off', RATE_LIMIT_PER_IP: '1', RATE_LIMIT_AUTH_FAILURES: '1' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('RATE_LIMIT=off switches every limit off (load tests)', async () => {
    const from = newClient();
    const statuses = await times(
      5,
      async () => (await httpFrom(t.baseUrl, from, 'GET', '/checkout/links/types', { headers: { 'api-key': WRONG_KEY } })).status,
    );
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
  });
});
