import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request, type HttpResult } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { encryptPayload } from '../../../packages/sdk/src';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const BODY_LIMIT = 64 * 1024;
const failed = (statusCode: string, message: string) => ({ status: 'failed', statusCode, message });
const DECRYPTION_FAILED = failed('400', 'Unable to decrypt the payload, please encrypt it with your encryption key and try again');

const orderPlaintext = (reference: string) => ({
  customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
  order: { amount: 1000, reference, description: 'Flood test', currency: 'NGN' },
  payment: { RedirectUrl: 'https://merchant.test/done' },
});

/**
 * Issue 13, fault (c): a flood of malformed, oversized and wrongly encrypted bodies, while
 * valid traffic goes on beside it. Each bad body gets its documented 4xx; every valid request
 * succeeds. Rate limits are off: this is about what the parsers and the decryption withstand,
 * not about the limits (test/integration/protection covers those).
 */
describe('a flood of hostile bodies beside valid traffic', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let other: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT: 'off', BODY_LIMIT_BYTES: String(BODY_LIMIT) });
    [m, other] = await Promise.all([createTestMerchant(t), createTestMerchant(t)]);
  }, 90_000);
  afterAll(async () => {
    await t.close();
  });

  it('answers each bad body with its documented error and lets every valid request through', async () => {
    const k = m.keys.test;
    const create = '/checkout/order/create';
    const plaintext = orderPlaintext('FLOOD-X');
    /** Each kind of bad body, with the answer the REST documentation gives for it. */
    const hostile: Array<{ name: string; send: () => Promise<HttpResult>; status: number; body: unknown }> = [
      {
        name: 'malformed JSON',
        send: () => request(t.baseUrl, 'POST', create, { apiKey: k.publicKey, rawBody: '{"data": "abc", ' }),
        status: 400,
        body: failed('VAL400', 'The request body is not valid JSON.'),
      },
      {
        name: 'binary noise',
        send: () => request(t.baseUrl, 'POST', create, { apiKey: k.publicKey, rawBody: '\u0000\u00ff\ufffd{]]' }),
        status: 400,
        body: failed('VAL400', 'The request body is not valid JSON.'),
      },
      {
        name: 'oversized',
        send: () => request(t.baseUrl, 'POST', create, { apiKey: k.publicKey, rawBody: JSON.stringify({ data: 'A'.repeat(BODY_LIMIT + 1024) }) }),
        status: 413,
        body: failed('413', 'The request body is too large.'),
      },
      {
        name: 'wrong media type',
        send: () => request(t.baseUrl, 'POST', create, { apiKey: k.publicKey, rawBody: '<data>abc</data>', headers: { 'content-type': 'application/xml' } }),
        status: 415,
        body: failed('415', 'Content-Type must be application/json.'),
      },
      {
        name: 'no encrypted data',
        send: () => request(t.baseUrl, 'POST', create, { apiKey: k.publicKey, body: plaintext }),
        status: 400,
        body: failed('400', 'Unable to find the encrypted data, please encrypt your payload and try again'),
      },
      {
        name: 'garbage ciphertext',
        send: () => request(t.baseUrl, 'POST', create, { apiKey: k.publicKey, body: { data: Buffer.from('not a ciphertext at all').toString('base64') } }),
        status: 400,
        body: DECRYPTION_FAILED,
      },
      {
        name: 'another merchant’s key',
        send: () => request(t.baseUrl, 'POST', create, { apiKey: k.publicKey, body: { data: encryptPayload(plaintext, other.keys.test.encryptionKey) } }),
        status: 400,
        body: DECRYPTION_FAILED,
      },
      {
        name: 'truncated ciphertext',
        send: () => request(t.baseUrl, 'POST', create, { apiKey: k.publicKey, body: { data: encryptPayload(plaintext, k.encryptionKey).slice(0, 100) } }),
        status: 400,
        body: DECRYPTION_FAILED,
      },
    ];

    let stop = false;
    const wrong: string[] = [];
    const sent = new Map<string, number>();
    const flood = async (w: number) => {
      for (let i = w; !stop; i++) {
        const kind = hostile[i % hostile.length]!;
        let res: HttpResult;
        try {
          res = await kind.send();
        } catch (err) {
          wrong.push(`${kind.name}: ${String(err)}`);
          continue;
        }
        sent.set(kind.name, (sent.get(kind.name) ?? 0) + 1);
        if (res.status !== kind.status || JSON.stringify(res.body) !== JSON.stringify(kind.body))
          wrong.push(`${kind.name}: ${res.status} ${res.text.slice(0, 200)}`);
      }
    };
    const valid: Array<{ create: HttpResult; verify: HttpResult }> = [];
    const legit = async (w: number) => {
      for (let i = 0; i < 8; i++) {
        const reference = `FLOOD-${w}-${i}-${Date.now()}`;
        const created = await postEncrypted(t.baseUrl, create, k.publicKey, k.encryptionKey, orderPlaintext(reference));
        const verified = await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: k.privateKey, body: { reference } });
        valid.push({ create: created, verify: verified });
      }
    };
    const flooders = Array.from({ length: 6 }, (_, w) => flood(w));
    await Promise.all([1, 2, 3].map(legit));
    stop = true;
    await Promise.all(flooders);

    expect(wrong).toEqual([]);
    // Every kind of bad body was sent, many times over, beside the valid traffic.
    for (const kind of hostile) expect(sent.get(kind.name) ?? 0).toBeGreaterThan(3);
    expect(valid).toHaveLength(24);
    for (const v of valid) {
      expect(v.create.status).toBe(200);
      expect(v.create.body.statusCode).toBe('01');
      expect(v.verify.status).toBe(200);
      expect(v.verify.body.data.narration).toBe('Flood test');
    }
    // Still healthy afterwards.
    expect((await request(t.baseUrl, 'GET', '/health/ready')).status).toBe(200);
  }, 60_000);
});
