import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { RESPONSE_BODY_LIMIT_BYTES, WebhookHttpClient } from '../../../src/events/webhook-http';
import type { WebhookResolver } from '../../../src/merchants/webhook-url';
import { startDnsServer } from '../../support/dns-server';

/**
 * Holds every thread of libuv's pool (file access, crypto, and getaddrinfo for `dns.lookup` run
 * there): each thread blocks opening a FIFO for reading, until `release()` opens them for
 * writing. `probeRan()` tells whether a pool job queued after them (a file access) has run.
 */
async function holdThreadPool(): Promise<{ probeRan: () => boolean; release: () => Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-pool-'));
  const fifos = Array.from({ length: Number(process.env.UV_THREADPOOL_SIZE) || 4 }, (_, i) => path.join(dir, `fifo-${i}`));
  execFileSync('mkfifo', fifos);
  const readers = fifos.map((fifo) => fs.promises.open(fifo, 'r'));
  let ran = false;
  const probe = fs.promises.access(dir).then(() => (ran = true));
  return {
    probeRan: () => ran,
    async release() {
      for (const fifo of fifos) fs.closeSync(fs.openSync(fifo, 'w'));
      for (const handle of await Promise.all(readers)) await handle.close();
      await probe;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Only loopback is ever connected to here: names resolve through a table, never through DNS. */
describe('WebhookHttpClient', () => {
  let server: http.Server;
  let port: number;
  const seen: Array<{ url: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  const clients: WebhookHttpClient[] = [];
  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        seen.push({ url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        if (req.url === '/big') return res.writeHead(500).end('é'.repeat(3000));
        if (req.url === '/slow') return void setTimeout(() => res.writeHead(200).end(), 500);
        if (req.url === '/trickle') {
          res.writeHead(200);
          const timer = setInterval(() => res.write('.'), 20);
          res.on('close', () => clearInterval(timer));
          return;
        }
        if (req.url === '/hang') return;
        if (req.url === '/redirect') return res.writeHead(302, { location: '/ok' }).end();
        res.writeHead(204).end();
      });
    });
    server.keepAliveTimeout = 30_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });
  const client = (allowedNetworks: string[], resolve?: WebhookResolver) => {
    const c = new WebhookHttpClient({ allowedNetworks }, { resolve });
    clients.push(c);
    return c;
  };
  const loopbackAllowed = () => client(['127.0.0.0/8']);

  it('POSTs the exact body with the given headers', async () => {
    const body = '{"b":1,"a":"ü"}';
    const result = await loopbackAllowed().post(`http://127.0.0.1:${port}/ok`, body, { 'content-type': 'application/json', 'webhook-id': 'x' }, 2000);
    expect(result).toMatchObject({ statusCode: 204, error: null, responseBody: null });
    expect(seen.at(-1)!.body).toBe(body);
    expect(seen.at(-1)!.headers).toMatchObject({ 'content-type': 'application/json', 'webhook-id': 'x', 'content-length': String(Buffer.byteLength(body)) });
  });

  it('keeps at most 1 KiB of the answer; does not follow redirects', async () => {
    const c = loopbackAllowed();
    expect(RESPONSE_BODY_LIMIT_BYTES).toBe(1024);
    const big = await c.post(`http://127.0.0.1:${port}/big`, '{}', {}, 2000);
    expect(big.statusCode).toBe(500);
    expect(Buffer.byteLength(big.responseBody!)).toBeLessThanOrEqual(1024);
    expect(big.responseBody!.startsWith('éé')).toBe(true);
    expect((await c.post(`http://127.0.0.1:${port}/redirect`, '{}', {}, 2000)).statusCode).toBe(302);
    const refused = await c.post('http://127.0.0.1:9/', '{}', {}, 2000);
    expect(refused).toMatchObject({ statusCode: null, error: expect.stringContaining('ECONNREFUSED') });
  });

  it('gives each attempt a hard deadline, whether the receiver is slow, hangs or trickles', async () => {
    const c = loopbackAllowed();
    const slow = await c.post(`http://127.0.0.1:${port}/slow`, '{}', {}, 100);
    expect(slow).toMatchObject({ statusCode: null, error: 'timeout after 100 ms' });
    expect(slow.latencyMs).toBeGreaterThanOrEqual(90);
    // The deadline's own error says it fired (a hanging receiver would otherwise never answer).
    expect(await c.post(`http://127.0.0.1:${port}/hang`, '{}', {}, 150)).toMatchObject({ statusCode: null, error: 'timeout after 150 ms' });
    const trickle = await c.post(`http://127.0.0.1:${port}/trickle`, '{}', {}, 200);
    expect(trickle.statusCode).toBe(200);
  });

  it('refuses internal addresses in every form, before any byte is sent', async () => {
    const strict = client([], async () => [{ address: '127.0.0.1', family: 4 }]);
    const before = seen.length;
    for (const host of ['127.0.0.1', '2130706433', '0x7f.1', '017700000001', '[::ffff:127.0.0.1]', '[::ffff:7f00:1]', 'localhost', 'public.example']) {
      const result = await strict.post(`http://${host}:${port}/ok`, '{}', {}, 2000);
      expect(result).toMatchObject({ statusCode: null, error: expect.stringMatching(/^refused: /) });
    }
    expect(seen.length).toBe(before);
  });

  it("resolves host names off libuv's thread pool: with every pool thread held, deliveries to named hosts still arrive", async () => {
    const nameserver = await startDnsServer({ 'hooks.example': ['127.0.0.1'] });
    const c = new WebhookHttpClient({ allowedNetworks: ['127.0.0.0/8'] }, { dns: { servers: [nameserver.address] } });
    clients.push(c);
    const before = seen.length;
    const pool = await holdThreadPool();
    try {
      for (const host of ['localhost', 'hooks.example']) {
        expect(await c.post(`http://${host}:${port}/ok`, '{}', { connection: 'close' }, 2000)).toMatchObject({ statusCode: 204, error: null });
      }
      // The pool was held throughout: a file access queued behind the held threads has not run.
      expect(pool.probeRan()).toBe(false);
    } finally {
      await pool.release();
      await nameserver.close();
    }
    expect(seen.length).toBe(before + 2);
    expect(nameserver.questions.map((q) => q.name)).toEqual(['hooks.example', 'hooks.example']);
  });

  it('checks the address of every new connection, so DNS rebinding is caught', async () => {
    // First resolution: loopback (exempted here, as in local development)... the rules still hold per connection.
    let answer = '127.0.0.1';
    const rebinding = client(['127.0.0.1/32'], async () => [{ address: answer, family: 4 }]);
    expect((await rebinding.post(`http://rebind.example:${port}/ok`, '{}', { connection: 'close' }, 2000)).statusCode).toBe(204);
    answer = '127.0.0.2'; // now another loopback address, not exempted (and nothing listens there: never reached)
    expect(await rebinding.post(`http://rebind.example:${port}/ok`, '{}', {}, 2000)).toMatchObject({
      statusCode: null,
      error: 'refused: rebind.example resolves to a non-public address',
      refusedAddresses: ['127.0.0.2'],
    });
  });

  it('names no address a host resolved to in a refusal: the merchant reads the host, the addresses are returned for the operators only', async () => {
    const strict = client([], async () => [
      { address: '10.0.0.5', family: 4 },
      { address: 'fd00::5', family: 6 },
    ]);
    const result = await strict.post(`http://intranet.example:${port}/hooks?token=secret`, '{}', {}, 2000);
    expect(result).toEqual({
      statusCode: null,
      latencyMs: expect.any(Number),
      error: 'refused: intranet.example resolves to a non-public address',
      responseBody: null,
      refusedAddresses: ['10.0.0.5', 'fd00::5'],
    });
    // A literal address is the merchant's own text; a name of this machine is refused by name.
    expect((await strict.post(`http://10.0.0.5:${port}/`, '{}', {}, 2000)).error).toBe('refused: 10.0.0.5 is a non-public address');
    expect((await strict.post(`http://localhost:${port}/`, '{}', {}, 2000)).error).toBe('refused: localhost names this machine, a non-public address');
  });

  it('a socket kept alive under one policy is never reused under a stricter one', async () => {
    const resolve: WebhookResolver = async () => [{ address: '127.0.0.1', family: 4 }];
    const permissive = client(['127.0.0.0/8'], resolve);
    const strict = client([], resolve);
    const before = seen.length;
    expect((await permissive.post(`http://hooks.example:${port}/ok`, '{}', {}, 2000)).statusCode).toBe(204);
    // Same host and port, keep-alive socket open: the strict client resolves and refuses anyway.
    expect(await strict.post(`http://hooks.example:${port}/ok`, '{}', {}, 2000)).toMatchObject({
      statusCode: null,
      error: expect.stringMatching(/^refused: /),
    });
    expect(seen.length).toBe(before + 1);
  });
});
