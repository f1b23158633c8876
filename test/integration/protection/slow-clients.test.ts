import net from 'node:net';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { firstStatus, httpFrom, rawExchange } from './raw-http';

describe('slow clients', () => {
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestService({
      REQUEST_TIMEOUT_MS: '600',
      KEEP_ALIVE_TIMEOUT_MS: '1000',
      MAX_CONNECTIONS_PER_IP: '3',
      BODY_LIMIT_BYTES: '65536',
      RATE_LIMIT: 'on',
    });
    m = await createTestMerchant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const host = () => `Host: ${new URL(t.baseUrl).host}\r\n`;

  it('headers that never finish are cut off after REQUEST_TIMEOUT_MS (slowloris)', async () => {
    const res = await rawExchange(t.baseUrl, [`GET /checkout/links/types HTTP/1.1\r\n${host()}X-Slow: a`], 5000);
    // Closed by the server while the client still waited (the exchange gives up only after 5 s).
    expect(res.closedByServer).toBe(true);
    expect([0, 408]).toContain(firstStatus(res.text));
  });

  it('a body that never finishes is cut off after REQUEST_TIMEOUT_MS', async () => {
    const head = `POST /checkout/order/verify HTTP/1.1\r\n${host()}api-key: ${m.keys.test.privateKey}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"refer`;
    const res = await rawExchange(t.baseUrl, [head], 5000);
    // Closed by the server while the client still waited (the exchange gives up only after 5 s).
    expect(res.closedByServer).toBe(true);
    expect([0, 408]).toContain(firstStatus(res.text));
  });

  it('an idle keep-alive connection is closed after KEEP_ALIVE_TIMEOUT_MS', async () => {
    const res = await rawExchange(t.baseUrl, [`GET /health HTTP/1.1\r\n${host()}\r\n`], 5000);
    expect(firstStatus(res.text)).toBe(200);
    // Kept alive after the answer (not closed with it), then closed by the server while idle.
    expect(res.text).not.toMatch(/^connection: close/im);
    expect(res.closedByServer).toBe(true);
  });

  it('connections per IP are capped; another IP still connects', async () => {
    const port = Number(new URL(t.baseUrl).port);
    const open = (from: string) =>
      new Promise<net.Socket>((resolve) => {
        const s = net.connect({ port, host: '127.0.0.1', localAddress: from }, () => resolve(s));
        s.on('error', () => undefined);
      });
    const from = '127.0.0.40';
    const held = [await open(from), await open(from), await open(from)];
    const fourth = await open(from);
    let bound: NodeJS.Timeout | undefined;
    const closed = await new Promise<boolean>((resolve) => {
      fourth.once('close', () => resolve(true));
      bound = setTimeout(() => resolve(false), 10_000); // bounds a failure only
    }).finally(() => clearTimeout(bound));
    expect(closed).toBe(true);
    expect((await httpFrom(t.baseUrl, '127.0.0.41', 'GET', '/health')).status).toBe(200);
    for (const s of held) s.destroy();
  });

  it('every route refuses a body over the limit with 413, never a 5xx', async () => {
    const big = JSON.stringify({ data: 'A'.repeat(70_000) });
    const routes: [string, string][] = [
      ['POST', '/checkout/order/create'],
      ['POST', '/checkout/order/verify'],
      ['POST', '/checkout/links/create'],
      ['PATCH', '/checkout/links/1/edit'],
      ['POST', '/payment/order/create'],
      ['POST', '/graphql'],
      ['POST', '/pay/SOMELINK'],
      ['POST', '/sandbox/3ds/SOMEREF'],
      ['POST', '/no/such/route'],
    ];
    let n = 50;
    for (const [method, path] of routes) {
      const res = await httpFrom(t.baseUrl, `127.0.0.${n++}`, method, path, { headers: { 'api-key': m.keys.test.privateKey }, body: big });
      expect({ path, status: res.status < 500 }).toEqual({ path, status: true });
      if (!path.startsWith('/no/') && !path.startsWith('/payment/')) expect({ path, status: res.status }).toEqual({ path, status: 413 });
    }
    const form = await httpFrom(t.baseUrl, '127.0.0.70', 'POST', '/sandbox/3ds/SOMEREF', {
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `otp=${'1'.repeat(20_000)}`,
    });
    expect(form.status).toBe(413);
  });
});
