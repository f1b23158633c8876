import fc from 'fast-check';
import { startTestService, type TestService } from '../../support/service';
import { request, type HttpResult } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { encryptPayload } from '../../support/payload-client';
import { httpFrom } from './raw-http';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

/**
 * Properties over the REST interface: whatever JSON body or plaintext arrives, the answer is
 * never a 5xx, and every error is the documented `{ status: "failed", statusCode|status_code,
 * message }`. Bounded (about 200 requests, a few seconds) with a fixed seed, so a failure
 * reproduces; set FUZZ_SEED to explore other inputs.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);

const PLAIN_ENDPOINTS: [string, string][] = [
  ['POST', '/checkout/links/create'],
  ['PATCH', '/checkout/links/1/edit'],
  ['PATCH', '/checkout/links/1/status/activate'],
  ['PATCH', '/checkout/links/1/status/disable'],
  ['POST', '/checkout/order/verify'],
];
const ENCRYPTED_ENDPOINTS = ['/checkout/order/create', '/checkout/order/fee', '/checkout/order/status', '/checkout/order/pay', '/checkout/order/event/track'];

function expectDocumentedAnswer(res: HttpResult, what: unknown): void {
  expect({ what, status: res.status < 500 }).toEqual({ what, status: true });
  if (res.status >= 400) {
    const body = res.body as Record<string, unknown>;
    const code = body?.statusCode ?? body?.status_code;
    expect({
      what,
      shape: Object.keys(body ?? {}).length === 3 && body.status === 'failed' && typeof code === 'string' && typeof body.message === 'string',
    }).toEqual({ what, shape: true });
  }
}

/** Values legacy clients and attackers send: anything JSON, plus the edge cases that broke things before. */
const hostileValue = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ maxLength: 40 }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '__proto__',
    'constructor',
    '9'.repeat(60),
    '-1',
    '1e400',
    '+275760-09-13T00:00:00.000Z',
    'NaN',
    '<script>',
    null,
    true,
    [],
    {},
    1e308,
    -0,
  ),
);
const shaped = (fields: string[]) =>
  fc.dictionary(fc.oneof(fc.constantFrom(...fields, ...fields.map((f) => f.toUpperCase())), fc.string({ maxLength: 12 })), hostileValue, { maxKeys: 6 });
const address = shaped(['street', 'city', 'state', 'country', 'zipcode']);

/** Plaintexts shaped like each Encrypted endpoint's, with hostile values. */
const shapedPlaintext = fc.oneof(
  fc.record(
    {
      customer: shaped(['firstname', 'lastname', 'mobile', 'country', 'email']),
      order: shaped(['amount', 'reference', 'description', 'currency']),
      payment: shaped(['RedirectUrl', 'paymentLinkId', 'frequencyId', 'numberOfPayments']),
      paymentMeta: shaped(['ipAddress']),
    },
    { requiredKeys: [] },
  ),
  shaped(['amount', 'paymentOption', 'currency']),
  shaped(['reference']),
  fc.record(
    {
      reference: hostileValue,
      paymentOption: fc.constantFrom('C', 'PAYPAL', 'X'),
      country: hostileValue,
      card: fc.record(
        { cardNumber: hostileValue, expiryMonth: hostileValue, expiryYear: hostileValue, cvv: hostileValue, billingAddress: address },
        { requiredKeys: [] },
      ),
      paypal: shaped(['fullName', 'mobile', 'house']),
    },
    { requiredKeys: [] },
  ),
  fc.record({ orderReference: hostileValue, event: hostileValue, description: hostileValue, metadata: hostileValue }, { requiredKeys: [] }),
);

describe('fuzzing the REST interface', () => {
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    // Card attempts on the payment page are rate limited per IP; the fuzzer needs every request answered.
    t = await startTestService({ RATE_LIMIT: 'off' });
    m = await createTestMerchant(t);
    const link = await request(t.baseUrl, 'POST', '/checkout/links/create', {
      apiKey: m.keys.test.privateKey,
      body: { Name: 'Fuzz link', Description: 'fuzz', PaymentType: 'MC', Currency: 'NGN', AuthOption: 'NOAUTH' },
    });
    expect(link.status).toBe(200);
    linkReference = link.body.data.paymentLink.reference;
  });
  let linkReference: string;
  afterAll(async () => {
    await t.close();
  });

  it('arbitrary JSON bodies to every plain endpoint never get a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...PLAIN_ENDPOINTS),
        fc.oneof(
          fc.jsonValue({ maxDepth: 4 }),
          shaped(['Name', 'Description', 'PaymentType', 'Currency', 'AuthOption', 'Amount', 'Mobile', 'BackgroundImage', 'Website', 'Limit', 'reference']),
        ),
        async ([method, path], body) => {
          const res = await request(t.baseUrl, method, path, { apiKey: m.keys.test.privateKey, body });
          expectDocumentedAnswer(res, { method, path, body });
        },
      ),
      { numRuns: 60, seed: SEED },
    );
  });

  it('arbitrary encrypted plaintexts to every Encrypted endpoint never get a 5xx', async () => {
    const plaintext = fc.oneof(
      fc.string({ minLength: 1, maxLength: 300 }),
      fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)),
      shapedPlaintext.map((v) => JSON.stringify(v)),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...ENCRYPTED_ENDPOINTS), plaintext, async (path, text) => {
        let data: string;
        try {
          data = encryptPayload(text, m.keys.test.encryptionKey);
        } catch {
          return; // not encodable as UTF-8 (a lone surrogate): no client can send it
        }
        const res = await request(t.baseUrl, 'POST', path, { apiKey: m.keys.test.publicKey, body: { data } });
        expectDocumentedAnswer(res, { path, text });
      }),
      { numRuns: 120, seed: SEED },
    );
  });

  it('bodies nested to any depth never get a 5xx, with or without an Idempotency-Key', async () => {
    const endpoints: [string, string][] = [...PLAIN_ENDPOINTS, ['POST', '/checkout/order/create'], ['POST', '/graphql'], ['POST', `/pay/NO-SUCH-LINK`]];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...endpoints),
        fc.integer({ min: 1, max: 30_000 }),
        fc.boolean(),
        fc.boolean(),
        async ([method, path], depth, arrays, idempotent) => {
          const rawBody = arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
          const headers: Record<string, string> = idempotent ? { 'idempotency-key': `deep-${depth}-${arrays}-${path}` } : {};
          const res = await request(t.baseUrl, method, path, { apiKey: m.keys.test.privateKey, rawBody, headers });
          if (path === '/graphql' || path.startsWith('/pay/')) expect({ path, depth, status: res.status < 500 }).toEqual({ path, depth, status: true });
          else expectDocumentedAnswer(res, { path, depth, arrays });
        },
      ),
      { numRuns: 25, seed: SEED },
    );
  });

  it('arbitrary query strings and path ids never get a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 30 }),
        fc.constantFrom('/checkout/links/all?id=', '/checkout/links/%s/edit', '/checkout/links/%s/status/activate'),
        async (text, template) => {
          const encoded = encodeURIComponent(text);
          const path = template.includes('%s') ? template.replace('%s', encoded || 'x') : template + encoded;
          const res = await request(t.baseUrl, template.includes('%s') ? 'PATCH' : 'GET', path, {
            apiKey: m.keys.test.privateKey,
            body: template.includes('%s') ? {} : undefined,
          });
          expectDocumentedAnswer(res, { path });
        },
      ),
      { numRuns: 30, seed: SEED },
    );
  });

  it('arbitrary bodies and card plaintexts on the payment-link page never get a 5xx', async () => {
    const card = fc.record(
      {
        card: fc.record(
          { cardNumber: hostileValue, expiryMonth: hostileValue, expiryYear: hostileValue, cvv: hostileValue, billingAddress: address },
          { requiredKeys: [] },
        ),
        paypal: shaped(['fullName', 'mobile', 'house']),
      },
      { requiredKeys: [] },
    );
    const body = fc.record(
      {
        amount: hostileValue,
        paymentOption: fc.oneof(hostileValue, fc.constantFrom('C', 'PAYPAL')),
        customer: fc.oneof(hostileValue, shaped(['firstname', 'lastname', 'email', 'mobile', 'country'])),
        data: fc.oneof(
          hostileValue,
          card.map((c) => encryptPayload(c, m.keys.test.encryptionKey)),
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(body, fc.jsonValue({ maxDepth: 3 })), async (payload) => {
        const res = await request(t.baseUrl, 'POST', `/pay/${linkReference}`, { body: payload });
        expect({ payload, status: res.status < 500 }).toEqual({ payload, status: true });
      }),
      { numRuns: 40, seed: SEED },
    );
  });

  it('every route refuses its absolute-form and percent-encoded spellings with a 400 in its own shape, never a 5xx', async () => {
    const routes: [string, string, 'rest' | 'graphql' | 'page'][] = [
      ...PLAIN_ENDPOINTS.map(([method, path]) => [method, path, 'rest'] as [string, string, 'rest']),
      ...ENCRYPTED_ENDPOINTS.map((path) => ['POST', path, 'rest'] as [string, string, 'rest']),
      ...ENCRYPTED_ENDPOINTS.map((path) => ['POST', path.replace('/checkout/', '/payment/'), 'rest'] as [string, string, 'rest']),
      ['GET', '/checkout/banks', 'rest'],
      ['GET', '/payment/banks', 'rest'],
      ['GET', '/checkout/links/all', 'rest'],
      ['POST', '/graphql', 'graphql'],
      ['GET', '/graphql', 'graphql'],
      ['GET', `/pay/${linkReference}`, 'page'],
      ['POST', `/pay/${linkReference}`, 'page'],
      ['GET', '/sandbox/3ds/OPNOSUCHPAYMENT', 'page'],
      ['POST', '/sandbox/paypal/OPNOSUCHPAYMENT', 'page'],
    ];
    /** A path with one of its unreserved characters percent-encoded (upper or lower case hex). */
    const encodedAt = (path: string, at: number, lower: boolean) => {
      const positions = [...path].map((c, i) => (/[A-Za-z0-9\-._~]/.test(c) ? i : -1)).filter((i) => i >= 0);
      const i = positions[at % positions.length];
      const hex = path.charCodeAt(i).toString(16).padStart(2, '0');
      return `${path.slice(0, i)}%${lower ? hex : hex.toUpperCase()}${path.slice(i + 1)}`;
    };
    const spelling = fc.oneof(
      fc.record({
        kind: fc.constant('absolute' as const),
        host: fc.constantFrom('127.0.0.1', 'localhost', 'evil.example', `127.0.0.1:${new URL(t.baseUrl).port}`),
      }),
      fc.record({ kind: fc.constant('encoded' as const), at: fc.nat(), lower: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), spelling, fc.jsonValue({ maxDepth: 2 }), async ([method, path, family], how, body) => {
        const target = how.kind === 'absolute' ? `http://${how.host}${path}` : encodedAt(path, how.at, how.lower);
        const res = await httpFrom(t.baseUrl, '127.0.0.1', method, target, {
          headers: { 'api-key': m.keys.test.privateKey },
          body: method === 'GET' ? undefined : JSON.stringify(body),
        });
        const what = { method, target };
        expect({ what, status: res.status }).toEqual({ what, status: 400 });
        if (family === 'rest')
          expect({ what, body: res.body }).toEqual({ what, body: { status: 'failed', statusCode: 'VAL400', message: 'The request URL is not valid.' } });
        if (family === 'graphql') expect({ what, code: res.body?.errors?.[0]?.extensions?.code }).toEqual({ what, code: 'BAD_REQUEST' });
        if (family === 'page')
          expect({ what, frame: res.headers['x-frame-options'], type: res.headers['content-type'] }).toEqual({
            what,
            frame: 'DENY',
            type: 'text/html; charset=utf-8',
          });
      }),
      { numRuns: 80, seed: SEED },
    );
  });
});
