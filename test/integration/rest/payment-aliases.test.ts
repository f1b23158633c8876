import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { encryptPayload } from '../../../packages/sdk/src';

let counter = 0;
const nextRef = () => `ALIAS-${process.pid}-${Date.now()}-${++counter}`;
const orderPlaintext = (reference: string) => ({
  customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
  order: { amount: 1000, reference, description: 'Two tickets', currency: 'NGN' },
  payment: { RedirectUrl: 'https://merchant.test/done' },
});

/**
 * Some legacy clients call every endpoint under `/payment/` (`GET /payment/banks`): the base
 * path is an alias of `/checkout/` for every endpoint, the same endpoint in every respect but
 * the OpenAPI document, which names each endpoint once.
 */
describe('REST: /payment/<path> is /checkout/<path>', () => {
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers GET /payment/banks as GET /checkout/banks', async () => {
    const alias = await request(t.baseUrl, 'GET', '/payment/banks', { apiKey: m.keys.test.publicKey });
    expect(alias.status).toBe(200);
    expect(alias.body).toEqual((await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey: m.keys.test.publicKey })).body);
    expect(alias.body.data.length).toBeGreaterThan(0);
  });

  it('serves every documented endpoint under /payment too, and documents none of the aliases', async () => {
    const document = (await request(t.baseUrl, 'GET', '/openapi.json')).body;
    const paths = Object.keys(document.paths);
    expect(paths.filter((p) => p.startsWith('/payment'))).toEqual([]);
    const endpoints = paths.flatMap((p) => Object.keys(document.paths[p]).map((method) => [method.toUpperCase(), p] as const));
    expect(endpoints.length).toBeGreaterThanOrEqual(14);
    for (const [method, path] of endpoints) {
      const concrete = path.replace(/\{[^}]+\}/g, '1');
      // Without a key both answer 401 the same way; a path that does not exist would be a 404.
      const canonical = await request(t.baseUrl, method, concrete);
      const alias = await request(t.baseUrl, method, concrete.replace(/^\/checkout\//, '/payment/'));
      expect({ method, path, status: alias.status, body: alias.body }).toEqual({ method, path, status: canonical.status, body: canonical.body });
      expect({ method, path, status: alias.status }).toEqual({ method, path, status: 401 });
    }
  });

  it('creates and lists payment links under /payment', async () => {
    const k = m.keys.test;
    const created = await request(t.baseUrl, 'POST', '/payment/links/create', {
      apiKey: k.privateKey,
      body: { Name: 'Alias link', Description: 'made under /payment', PaymentType: 'MC', Currency: 'NGN', AuthOption: 'NOAUTH' },
    });
    expect(created.status).toBe(200);
    const id = created.body.data.paymentLink.id;
    const listed = await request(t.baseUrl, 'GET', `/payment/links/all?id=${id}`, { apiKey: k.privateKey });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual((await request(t.baseUrl, 'GET', `/checkout/links/all?id=${id}`, { apiKey: k.privateKey })).body);
  });

  it('replays the same Idempotency-Key and body on /payment/order/create after /checkout/order/create, instead of refusing it', async () => {
    const k = m.keys.test;
    const plaintext = orderPlaintext(nextRef());
    const key = `alias-${nextRef()}`;
    const send = (path: string) =>
      request(t.baseUrl, 'POST', path, {
        apiKey: k.publicKey,
        headers: { 'idempotency-key': key },
        body: { data: encryptPayload(plaintext, k.encryptionKey) },
      });
    const first = await send('/checkout/order/create');
    expect(first.status).toBe(200);
    expect(first.body.statusCode).toBe('01');
    const again = await send('/payment/order/create');
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    // And the other way round, on a plain endpoint.
    const linkKey = `alias-link-${nextRef()}`;
    const link = { Name: 'Once', Description: 'one link', PaymentType: 'MC', Currency: 'NGN', AuthOption: 'NOAUTH' };
    const viaAlias = await request(t.baseUrl, 'POST', '/payment/links/create', { apiKey: k.privateKey, headers: { 'idempotency-key': linkKey }, body: link });
    expect(viaAlias.status).toBe(200);
    const viaCanonical = await request(t.baseUrl, 'POST', '/checkout/links/create', {
      apiKey: k.privateKey,
      headers: { 'idempotency-key': linkKey },
      body: link,
    });
    expect(viaCanonical.headers.get('idempotent-replayed')).toBe('true');
    expect(viaCanonical.body).toEqual(viaAlias.body);
  });

  it('still tells a different request under the same key apart on the alias', async () => {
    const k = m.keys.test;
    const key = `alias-other-${nextRef()}`;
    const send = (path: string, reference: string) =>
      request(t.baseUrl, 'POST', path, {
        apiKey: k.publicKey,
        headers: { 'idempotency-key': key },
        body: { data: encryptPayload(orderPlaintext(reference), k.encryptionKey) },
      });
    expect((await send('/checkout/order/create', nextRef())).status).toBe(200);
    const otherReference = nextRef();
    const other = await send('/payment/order/create', otherReference);
    expect(other.status).toBe(422);
    // The order the alias was asked for was not made.
    const status = await postEncrypted(t.baseUrl, '/payment/order/status', k.publicKey, k.encryptionKey, { reference: otherReference });
    expect(status.body.status).toBe('failed');
  });
});
