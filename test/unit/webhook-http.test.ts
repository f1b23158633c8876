import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { postWebhook } from '../../src/events/webhook-http';

describe('postWebhook', () => {
  let server: http.Server;
  let port: number;
  const seen: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        if (req.url === '/big') return res.writeHead(500).end('é'.repeat(3000));
        if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end(), 500);
        if (req.url === '/redirect') return res.writeHead(302, { location: '/ok' }).end();
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const options = { timeoutMs: 2000, refuseInternalAddresses: false };

  it('POSTs the exact body with the given headers', async () => {
    const body = '{"b":1,"a":"ü"}';
    const result = await postWebhook(`http://127.0.0.1:${port}/ok`, body, { 'content-type': 'application/json', 'webhook-id': 'x' }, options);
    expect(result).toMatchObject({ statusCode: 204, error: null, responseBody: null });
    expect(seen.at(-1)!.body).toBe(body);
    expect(seen.at(-1)!.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'x', 'content-length': String(Buffer.byteLength(body)) });
  });

  it('keeps the first 2 KiB of the answer, does not follow redirects, and gives up at the deadline', async () => {
    const big = await postWebhook(`http://127.0.0.1:${port}/big`, '{}', {}, options);
    expect(big.statusCode).toBe(500);
    expect(Buffer.byteLength(big.responseBody!)).toBeLessThanOrEqual(2048);
    expect(big.responseBody!.startsWith('éé')).toBe(true);
    expect((await postWebhook(`http://127.0.0.1:${port}/redirect`, '{}', {}, options)).statusCode).toBe(302);
    const slow = await postWebhook(`http://127.0.0.1:${port}/slow`, '{}', {}, { ...options, timeoutMs: 100 });
    expect(slow).toMatchObject({ statusCode: null, error: 'timeout after 100 ms' });
    expect(slow.latencyMs).toBeGreaterThanOrEqual(90);
    const refused = await postWebhook('http://127.0.0.1:9/', '{}', {}, options);
    expect(refused).toMatchObject({ statusCode: null, error: expect.stringContaining('ECONNREFUSED') });
  });

  it('refuses, when asked, a host name that resolves to an internal address', async () => {
    const guarded = await postWebhook(`http://localhost:${port}/ok`, '{}', {}, { ...options, refuseInternalAddresses: true });
    expect(guarded).toMatchObject({ statusCode: null, error: expect.stringContaining('resolves to an internal address') });
    const open = await postWebhook(`http://localhost:${port}/ok`, '{}', {}, options);
    expect(open.statusCode).toBe(204);
  });
});
