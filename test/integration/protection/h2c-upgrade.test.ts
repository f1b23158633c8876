import WebSocket from 'ws';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { firstStatus, rawExchange } from './raw-http';

/** Exactly the headers Java's java.net.http.HttpClient adds to every HTTP/1.1 request by default. */
const JAVA_UPGRADE = 'Connection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA\r\nUpgrade: h2c\r\n';

describe('h2c upgrade requests are answered as plain HTTP/1.1', () => {
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const host = () => `Host: ${new URL(t.baseUrl).host}\r\n`;
  const post = (path: string, body: string, extra: string) =>
    `POST ${path} HTTP/1.1\r\n${host()}${extra}Content-Type: application/json\r\napi-key: ${m.keys.test.privateKey}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

  it('a POST as Java HttpClient sends it gets the route answer, not 101 or 415', async () => {
    const res = await rawExchange(t.baseUrl, [post('/checkout/order/verify', '{"reference":"NO-SUCH-ORDER"}', JAVA_UPGRADE)], 5000, { responses: 1 });
    expect(firstStatus(res.text)).toBe(404);
    expect(res.text).toContain('"status_code":"13"');
    expect(res.text).not.toMatch(/^HTTP\/1\.1 101/);
  });

  it('a POST with h2c and a body creates a payment link (the body is read)', async () => {
    const body = JSON.stringify({ Name: 'Java client link', Description: 'd', PaymentType: 'SC', Currency: 'NGN', AuthOption: 'AUTH', Amount: 100 });
    const res = await rawExchange(t.baseUrl, [post('/checkout/links/create', body, JAVA_UPGRADE)], 5000, { responses: 1 });
    expect(firstStatus(res.text)).toBe(200);
    expect(res.text).toContain('Java client link');
  });

  it('a GET with h2c is answered, and the connection stays usable for the next request', async () => {
    const get = `GET /checkout/links/types HTTP/1.1\r\n${host()}${JAVA_UPGRADE}api-key: ${m.keys.test.publicKey}\r\n\r\n`;
    const again = `GET /checkout/links/types HTTP/1.1\r\n${host()}api-key: ${m.keys.test.publicKey}\r\n\r\n`;
    const res = await rawExchange(t.baseUrl, [get, again], 5000, { responses: 2 });
    const statuses = [...res.text.matchAll(/HTTP\/1\.1 (\d{3})/g)].map((x) => Number(x[1]));
    expect(statuses).toEqual([200, 200]);
    expect(res.text).toContain('Payment link types retrieved successfully');
  });

  it('Upgrade: websocket on a REST path (POST) does not upgrade', async () => {
    const extra = 'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n';
    const res = await rawExchange(t.baseUrl, [post('/checkout/order/verify', '{"reference":"NO-SUCH-ORDER"}', extra)], 5000, { responses: 1 });
    expect(firstStatus(res.text)).toBe(404);
    expect(res.text).toContain('"status_code":"13"');
  });

  it('a GET with Upgrade: websocket on a REST path is answered by the route', async () => {
    const get = `GET /checkout/links/types HTTP/1.1\r\n${host()}Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\napi-key: ${m.keys.test.publicKey}\r\n\r\n`;
    const res = await rawExchange(t.baseUrl, [get], 5000, { responses: 1 });
    expect(firstStatus(res.text)).toBe(200);
  });

  it('h2c on /graphql (POST) runs the query over HTTP/1.1', async () => {
    const body = JSON.stringify({ query: '{ __typename }' });
    const res = await rawExchange(t.baseUrl, [post('/graphql', body, JAVA_UPGRADE)], 5000, { responses: 1 });
    expect(firstStatus(res.text)).toBe(200);
    expect(res.text).toContain('"__typename":"Query"');
  });

  it('Upgrade: websocket on /graphql still opens a graphql-ws socket', async () => {
    const ws = new WebSocket(`${t.baseUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws');
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { 'api-key': m.keys.test.publicKey } })));
      ws.once('message', (data) => {
        expect(JSON.parse(String(data))).toEqual({ type: 'connection_ack' });
        resolve();
      });
      ws.once('error', reject);
    });
    ws.close();
  });
});
