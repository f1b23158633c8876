import WebSocket from 'ws';
import { startTestService, type TestService } from '../../support/service';
import { graphql, postEncrypted, request } from '../../support/http';
import { encryptPayload } from '../../../packages/sdk/src/encryption';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { firstStatus, rawExchange } from './raw-http';

/** `{"a":{"a":…}}` nested `depth` levels, built as text so no JavaScript stack is involved. */
const nestedObjectText = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('no 5xx from input', () => {
  let t: TestService;
  let m: CreatedMerchant;
  const reference = `BAD-INPUT-${process.pid}-${Date.now()}`;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
    const created = await postEncrypted(t.baseUrl, '/checkout/order/create', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 1000, reference, description: 'd', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/done' },
    });
    expect(created.status).toBe(200);
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'])('/checkout-assets/%s is a 404, not a 500', async (name) => {
    const res = await request(t.baseUrl, 'GET', `/checkout-assets/${name}`);
    expect(res.status).toBe(404);
  });

  it('a cursor that decodes to the year 275760 is a validation error, not INTERNAL_SERVER_ERROR', async () => {
    for (const iso of ['+275760-09-13T00:00:00.000Z', '-271821-04-20T00:00:00.000Z', '0000-01-01T00:00:00.000Z']) {
      const after = Buffer.from(JSON.stringify([iso, 1])).toString('base64url');
      for (const field of ['paymentLinks', 'orders']) {
        const res = await graphql(
          t.baseUrl,
          `query($after: String) { ${field}(first: 5, after: $after) { totalCount } }`,
          { after },
          { 'api-key': m.keys.test.privateKey },
        );
        expect(res.status).toBeLessThan(500);
        expect({ field, iso, code: res.body.errors?.[0]?.extensions?.code }).toEqual({ field, iso, code: 'VAL400' });
      }
    }
    const hugeId = Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 2 ** 40])).toString('base64url');
    const res = await graphql(
      t.baseUrl,
      `
        query ($after: String) {
          paymentLinks(first: 5, after: $after) {
            totalCount
          }
        }
      `,
      { after: hugeId },
      { 'api-key': m.keys.test.privateKey },
    );
    expect(res.body.errors?.[0]?.extensions?.code).toBe('VAL400');
  });

  it('a plaintext nested thousands deep is refused with 400, with or without an Idempotency-Key (never a 500)', async () => {
    const text = `{"reference":"${reference}","x":${'['.repeat(3000)}${']'.repeat(3000)}}`;
    const data = encryptPayload(text, m.keys.test.encryptionKey);
    for (const headers of [{}, { 'Idempotency-Key': `deep-${reference}` }] as Record<string, string>[]) {
      const res = await request(t.baseUrl, 'POST', '/checkout/order/status', { apiKey: m.keys.test.publicKey, body: { data }, headers });
      expect(res.status).toBe(400);
    }
  });

  it('metadata nested hundreds deep is refused as a validation error (REST and GraphQL)', async () => {
    const deep = JSON.parse(nestedObjectText(300));
    const rest = await postEncrypted(t.baseUrl, '/checkout/order/event/track', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      orderReference: reference,
      event: 'deep',
      metadata: deep,
    });
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Metadata field must be nested at most 32 levels deep.' });

    const track = (depth: number) =>
      request(t.baseUrl, 'POST', '/graphql', {
        rawBody: `{"query":"mutation($m: JSON) { trackOrderEvent(input: { orderReference: \\"${reference}\\", event: \\"deep\\", metadata: $m }) { id } }","variables":{"m":${nestedObjectText(depth)}}}`,
        headers: { 'api-key': m.keys.test.privateKey },
      });
    const tooDeep = await track(40);
    expect(tooDeep.status).toBe(200);
    expect(tooDeep.body.errors[0].extensions.code).toBe('VAL400');
    // Hundreds or thousands of levels do not even reach GraphQL: the body is refused as it arrives.
    for (const depth of [300, 5000]) {
      const res = await track(depth);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ errors: [{ message: 'The request body is nested too deeply (at most 64 levels).', extensions: { code: 'BAD_REQUEST' } }] });
    }
    // 32 levels are still fine.
    const ok = await postEncrypted(t.baseUrl, '/checkout/order/event/track', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      orderReference: reference,
      event: 'ok',
      metadata: JSON.parse(nestedObjectText(31)),
    });
    expect(ok.status).toBe(200);
  });

  it('a body nested thousands deep is a VAL400 on every route, also with an Idempotency-Key', async () => {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    for (const path of ['/checkout/links/create', '/checkout/order/verify', '/checkout/order/create', '/pay/SOMELINK']) {
      const res = await request(t.baseUrl, 'POST', path, { apiKey: m.keys.test.privateKey, rawBody: deep, headers: { 'idempotency-key': `deep-${path}` } });
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 400,
        body: { status: 'failed', statusCode: 'VAL400', message: 'The request body is nested too deeply (at most 64 levels).' },
      });
    }
  });

  it('a 414 does not echo the URL', async () => {
    const res = await request(t.baseUrl, 'GET', `/pay/${'A'.repeat(150)}<script>alert(1)</script>`);
    expect(res.status).toBe(414);
    expect(res.text).not.toContain('AAAA');
    expect(res.text).not.toContain('script');
    expect(res.body).toEqual({ status: 'failed', statusCode: '414', message: 'The request URL is too long.' });
    const bad = await rawExchange(t.baseUrl, [`GET /pay/%E0%A4%A<b> HTTP/1.1\r\nHost: x\r\n\r\n`], 3000, { responses: 1 });
    expect(firstStatus(bad.text)).toBe(400);
    expect(bad.text).not.toContain('<b>');
  });

  describe('WebSocket frames that are not JSON', () => {
    let errors: jest.SpyInstance;
    beforeEach(() => {
      errors = jest.spyOn(console, 'error');
    });
    afterEach(() => {
      errors.mockRestore();
    });

    /** A later request answered: whatever the server did about the frame is done by then. */
    const afterServerMovedOn = async () => expect((await request(t.baseUrl, 'GET', '/health')).status).toBe(200);

    const sendFrame = (frame: string | Buffer) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`${t.baseUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
        ws.once('open', () => ws.send(frame, { binary: false }));
        ws.once('close', (code) => resolve(code));
        ws.once('error', reject);
      });

    it('text that is not JSON closes the socket with 4400 and logs no stack', async () => {
      expect(await sendFrame('not json {')).toBe(4400);
      expect(errors).not.toHaveBeenCalled();
    });

    it('a text frame that is not UTF-8 closes with 1007 and prints no stack to stderr', async () => {
      expect(await sendFrame(Buffer.from([0xff, 0xfe, 0x41]))).toBe(1007);
      await afterServerMovedOn();
      expect(errors).not.toHaveBeenCalled();
    });

    it('a frame over the size limit closes with 1009 and prints no stack to stderr', async () => {
      expect(await sendFrame('x'.repeat(70 * 1024))).toBe(1009);
      await afterServerMovedOn();
      expect(errors).not.toHaveBeenCalled();
    });
  });
});
