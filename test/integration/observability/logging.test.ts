import { generateKeyPairSync } from 'node:crypto';
import { Writable } from 'node:stream';
import { startTestService, TEST_ADMIN_TOKEN, type TestService } from '../../support/service';
import { graphql, postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { TEST_MASTER_KEY } from '../../support/database';
import { loggerOptions } from '../../../src/app';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const CARD = '4111111111111111';
const CVV = '739';
const PRIVATE_KEY_PEM = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/**
 * Issue 13 point 3: the service's real JSON log output (the logger configuration `npm start`
 * uses, at trace level, written to a stream this test reads) for real requests carrying
 * api keys, the admin token, authorization and cookies, card data, and for an internal error
 * whose message and cause hold card data, keys, a webhook secret and the master key.
 */
describe('structured logs', () => {
  let t: TestService;
  let m: CreatedMerchant;
  const raw: string[] = [];
  const lines = () =>
    raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);
  beforeAll(async () => {
    const stream = new Writable({
      write(chunk, _enc, done) {
        raw.push(chunk.toString());
        done();
      },
    });
    t = await startTestService({}, { logger: { ...(loggerOptions('trace') as object), stream } });
    m = await createTestMerchant(t);
  }, 90_000);
  afterAll(async () => {
    await t.close();
  });

  /** Every secret of this test, none of which may appear in any log line. */
  const secrets = () => [
    m.keys.test.privateKey,
    m.keys.test.publicKey,
    m.keys.live.privateKey,
    m.webhookSecret,
    TEST_ADMIN_TOKEN,
    TEST_MASTER_KEY,
    'Bearer-secret-value-123',
    'session-cookie-value-456',
    'query-token-value-789',
    CARD,
    PRIVATE_KEY_PEM.split('\n')[1]!,
  ];

  it('logs one JSON object per line, each line of a request with its id, and echoes a sane incoming id', async () => {
    const res = await request(t.baseUrl, 'GET', '/health', { headers: { 'x-request-id': 'client-id-42' } });
    expect(res.headers.get('x-request-id')).toBe('client-id-42');
    const mine = lines().filter((l) => l.reqId === 'client-id-42');
    expect(mine.map((l) => l.msg)).toEqual(expect.arrayContaining(['incoming request', 'request completed']));
    for (const l of mine) expect(l).toEqual(expect.objectContaining({ level: expect.any(Number), time: expect.any(Number), reqId: 'client-id-42' }));

    // An id that is too long or carries other characters is replaced by one of the server's.
    for (const given of ['x'.repeat(200), 'bad id with spaces', 'inject"\n{"level":60}']) {
      const other = await fetch(`${t.baseUrl}/health`, { headers: { 'x-request-id': given.replace(/\n/g, ' ') } });
      expect(other.headers.get('x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    }
  });

  it('redacts keys, tokens, cookies, card data, private keys, webhook secrets and the master key', async () => {
    const k = m.keys.test;
    const headers = {
      'x-request-id': 'redaction-1',
      'x-admin-token': TEST_ADMIN_TOKEN,
      authorization: 'Bearer Bearer-secret-value-123',
      cookie: 'session=session-cookie-value-456',
    };
    // A REST call with an api-key and a card in its (encrypted) body.
    const reference = `LOG-${Date.now()}`;
    await postEncrypted(t.baseUrl, '/checkout/order/create', k.publicKey, k.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 1000, reference, description: 'Logs', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/done' },
    });
    await postEncrypted(t.baseUrl, '/checkout/order/pay', k.publicKey, k.encryptionKey, {
      reference,
      paymentOption: 'C',
      country: 'NG',
      card: { cardNumber: CARD, expiryMonth: '11', expiryYear: '31', cvv: CVV, billingAddress: { street: 's', city: 'c', country: 'NG' } },
    });
    // Secrets in headers and in the query string.
    await request(t.baseUrl, 'GET', '/health/ready?token=query-token-value-789', { headers: { ...headers, 'api-key': k.privateKey } });
    // An internal error whose message and cause are full of secrets.
    const { services } = t.service.runtime.ctx;
    const summary = services.orders.summary;
    services.orders.summary = async () => {
      throw new Error(`processor said no for ${CARD} with ${k.privateKey}, secret ${m.webhookSecret}, master ${TEST_MASTER_KEY}, key ${PRIVATE_KEY_PEM}`, {
        cause: {
          cardNumber: CARD,
          cvv: CVV,
          expiryMonth: '11',
          expiryYear: '31',
          pan: CARD,
          webhookSecret: m.webhookSecret,
          masterKey: TEST_MASTER_KEY,
          privateKey: PRIVATE_KEY_PEM,
          apiKey: k.privateKey,
          nested: { authorization: 'Bearer Bearer-secret-value-123', note: `card ${CARD.replace(/(\d{4})/g, '$1 ').trim()}` },
        },
      });
    };
    try {
      const res = await graphql(
        t.baseUrl,
        'query { dashboardSummary(from: "2020-01-01T00:00:00Z", to: "2021-01-01T00:00:00Z") { successRate } }',
        {},
        { ...headers, 'x-request-id': 'redaction-2', 'api-key': k.privateKey },
      );
      expect(res.body.errors[0].extensions).toEqual({ code: 'INTERNAL_SERVER_ERROR', requestId: 'redaction-2' });
    } finally {
      services.orders.summary = summary;
    }

    const text = raw.join('');
    const all = lines();
    // The internal error was logged, with its request id, scrubbed.
    const logged = all.find((l) => l.reqId === 'redaction-2' && l.msg === 'GraphQL operation failed with an internal error');
    expect(logged).toBeDefined();
    expect(logged!.err.message.trim()).toMatch(
      /^processor said no for \[redacted\] with \[redacted\], secret \[redacted\], master \[redacted\], key \[redacted\]$/,
    );
    expect(logged!.err.cause).toEqual({
      cardNumber: '[redacted]',
      cvv: '[redacted]',
      expiryMonth: '[redacted]',
      expiryYear: '[redacted]',
      pan: '[redacted]',
      webhookSecret: '[redacted]',
      masterKey: '[redacted]',
      privateKey: '[redacted]',
      apiKey: '[redacted]',
      nested: { authorization: '[redacted]', note: 'card [redacted]' },
    });
    // The query string is not logged.
    expect(all.some((l) => l.req?.url === '/health/ready?[redacted]')).toBe(true);
    for (const secret of secrets()) expect({ secret, logged: text.includes(secret) }).toEqual({ secret, logged: false });
    expect(text).not.toContain(`"${CVV}"`);
    expect(text).not.toMatch(/BEGIN PRIVATE KEY/);
    expect(all.length).toBeGreaterThan(10);
  });
});
