import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { firstStatus, httpFrom, rawExchange, type RawResult } from './raw-http';

const REST_BAD_TARGET = { status: 'failed', statusCode: 'VAL400', message: 'The request URL is not valid.' };
const GRAPHQL_BAD_TARGET = { errors: [{ message: 'The request URL is not valid.', extensions: { code: 'BAD_REQUEST' } }] };

function expectPageHeaders(res: RawResult): void {
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['referrer-policy']).toBe('no-referrer');
}

/**
 * One spelling per route: the router would also route the absolute form of a request target
 * (`http://host/pay/x`) and paths with percent-encoded unreserved characters (`/%70ay/x`) to the
 * plain route. Those are refused with 400 in the matched route's own shape, and whatever is
 * answered carries the headers of the route matched, not of the URL's first characters.
 */
describe('request targets in other spellings', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let linkReference: string;
  let paypalPage: string;
  const from = '127.0.0.90';
  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT: 'off', AUTH_TIMEOUT_MS: '60000' });
    m = await createTestMerchant(t);
    const link = await request(t.baseUrl, 'POST', '/checkout/links/create', {
      apiKey: m.keys.test.privateKey,
      body: { Name: 'Spelling link', Description: 'spellings', PaymentType: 'MC', Currency: 'NGN', AuthOption: 'NOAUTH', Amount: 1000 },
    });
    linkReference = link.body.data.paymentLink.reference;
    const reference = `SPELL-${process.pid}-${Date.now()}`;
    const k = m.keys.test;
    await postEncrypted(t.baseUrl, '/checkout/order/create', k.publicKey, k.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 1000, reference, description: 'Order', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/return' },
    });
    const paid = await postEncrypted(t.baseUrl, '/checkout/order/pay', k.publicKey, k.encryptionKey, {
      reference,
      country: 'NG',
      paymentOption: 'PAYPAL',
      paypal: { fullName: 'Ada Obi', mobile: '+2348012345678', house: '12B' },
    });
    paypalPage = new URL(paid.body.data.paymentDetail.redirectUrl).pathname;
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, headers: Record<string, string> = {}) => httpFrom(t.baseUrl, from, 'GET', path, { headers });

  it('serves the pages in their one spelling with the page security headers', async () => {
    for (const path of [`/pay/${linkReference}`, paypalPage]) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expectPageHeaders(res);
    }
    expect((await get(paypalPage)).text).toContain('Approve and pay');
  });

  it('refuses encoded spellings of the PayPal and payment-link pages with a 400 page that no frame can show', async () => {
    for (const path of [
      paypalPage.replace('/sandbox/', '/%73andbox/'),
      paypalPage.replace('/paypal/', '/p%61ypal/'),
      `/%70ay/${linkReference}`,
      `/pay/%${linkReference.charCodeAt(0).toString(16)}${linkReference.slice(1)}`,
    ]) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.headers['content-type']).toContain('text/html');
      expect(res.text).not.toContain('Approve and pay');
      expectPageHeaders(res);
    }
  });

  it('refuses the absolute form of a request target in the shape of the route it names', async () => {
    const page = await get(`${t.baseUrl}${paypalPage}`);
    expect(page.status).toBe(400);
    expect(page.text).not.toContain('Approve and pay');
    expectPageHeaders(page);

    const rest = await httpFrom(t.baseUrl, from, 'GET', `${t.baseUrl}/checkout/banks`, { headers: { 'api-key': m.keys.test.publicKey } });
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual(REST_BAD_TARGET);

    const graphql = await httpFrom(t.baseUrl, from, 'POST', `${t.baseUrl}/graphql`, { body: JSON.stringify({ query: '{ __typename }' }) });
    expect(graphql.status).toBe(400);
    expect(graphql.body).toEqual(GRAPHQL_BAD_TARGET);
  });

  it('refuses encoded spellings of REST and GraphQL routes in their own error shapes', async () => {
    const rest = await httpFrom(t.baseUrl, from, 'GET', '/%63heckout/banks', { headers: { 'api-key': m.keys.test.publicKey } });
    expect(rest.status).toBe(400);
    expect(rest.body).toEqual(REST_BAD_TARGET);
    const alias = await httpFrom(t.baseUrl, from, 'GET', '/payment/b%61nks', { headers: { 'api-key': m.keys.test.publicKey } });
    expect(alias.status).toBe(400);
    expect(alias.body).toEqual(REST_BAD_TARGET);
    const graphql = await httpFrom(t.baseUrl, from, 'POST', '/%67raphql', { body: JSON.stringify({ query: '{ __typename }' }) });
    expect(graphql.status).toBe(400);
    expect(graphql.body).toEqual(GRAPHQL_BAD_TARGET);
    // Reserved characters stay encodable: a `/` inside a segment is data, not a path separator.
    expect((await httpFrom(t.baseUrl, from, 'GET', '/checkout/links/all?id=%31', { headers: { 'api-key': m.keys.test.privateKey } })).status).not.toBe(400);
    expect((await get('/pay/NO%2FSUCH')).status).toBe(404);
  });

  it('refuses the asterisk and authority forms with a REST 400', async () => {
    for (const line of ['OPTIONS * HTTP/1.1', `GET 127.0.0.1:${new URL(t.baseUrl).port} HTTP/1.1`]) {
      const res = await rawExchange(t.baseUrl, [`${line}\r\nHost: x\r\nConnection: close\r\n\r\n`], 2000, { responses: 1 });
      expect({ line, status: firstStatus(res.text) }).toEqual({ line, status: 400 });
      expect(JSON.parse(res.text.slice(res.text.indexOf('\r\n\r\n') + 4))).toEqual(REST_BAD_TARGET);
    }
  });
});
