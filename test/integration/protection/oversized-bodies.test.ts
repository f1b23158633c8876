import http from 'node:http';
import net from 'node:net';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { DRAIN_LIMITS } from '../../../src/protection/body-drain';

const FIVE_MB = 5 * 1024 * 1024;
const TOO_LARGE = { status: 'failed', statusCode: '413', message: 'The request body is too large.' };

/**
 * Sends `size` bytes as the body with Node's own HTTP client, in one write as most code does,
 * and reports the answer and any error the request saw until its socket closed.
 */
function nodeClientPost(baseUrl: string, path: string, headers: Record<string, string>, size: number) {
  const url = new URL(baseUrl);
  return new Promise<{ status?: number; body?: string; error?: string }>((resolve) => {
    const result: { status?: number; body?: string; error?: string } = {};
    const req = http.request(
      { host: url.hostname, port: Number(url.port), method: 'POST', path, agent: false, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        result.status = res.statusCode;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => (result.body = body));
        res.on('error', (err) => (result.error ??= (err as NodeJS.ErrnoException).code ?? err.message));
      },
    );
    req.on('error', (err) => (result.error ??= (err as NodeJS.ErrnoException).code ?? err.message));
    req.on('close', () => resolve(result));
    req.end(Buffer.alloc(size, 'A'));
  });
}

/** Writes a request with a 5 MB body on a raw socket, all of it, and collects what comes back until the server ends. */
function rawPost(baseUrl: string, path: string, apiKey: string, size: number) {
  const url = new URL(baseUrl);
  return new Promise<{ text: string; error?: string; ended: boolean }>((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let text = '';
    let error: string | undefined;
    socket.on('data', (d) => (text += d.toString('latin1')));
    socket.on('error', (err) => (error = (err as NodeJS.ErrnoException).code ?? err.message));
    socket.on('close', () => resolve({ text, error, ended: error === undefined }));
    socket.on('connect', () => {
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\napi-key: ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n`);
      socket.end(Buffer.alloc(size, 'A'));
    });
  });
}

/**
 * A body over BODY_LIMIT_BYTES is refused with 413 as soon as its Content-Length says so. The
 * client is still sending when the answer is ready; closing the socket at once would make the
 * client's next write fail (EPIPE, or a reset that discards the answer). The service answers,
 * stops writing, and reads and discards the rest for a bounded time before it closes.
 */
describe('oversized bodies', () => {
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT: 'off' });
    m = await createTestMerchant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([['/checkout/order/create'], ['/graphql'], ['/pay/SOMELINK']])(
    'Node’s HTTP client sending 5 MB to %s gets the 413 answer, not EPIPE',
    async (path) => {
      const res = await nodeClientPost(t.baseUrl, path, { 'api-key': m.keys.test.publicKey }, FIVE_MB);
      expect(res.error).toBeUndefined();
      expect(res.status).toBe(413);
      if (path.startsWith('/checkout/')) expect(JSON.parse(res.body!)).toEqual(TOO_LARGE);
    },
  );

  it('a raw socket writing all of a 5 MB body reads the whole 413 and sees the connection end without a reset', async () => {
    const res = await rawPost(t.baseUrl, '/checkout/order/create', m.keys.test.publicKey, FIVE_MB);
    expect(res.error).toBeUndefined();
    expect(res.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(res.text).toMatch(/\r\nconnection: close\r\n/i);
    expect(JSON.parse(res.text.slice(res.text.indexOf('\r\n\r\n') + 4))).toEqual(TOO_LARGE);
  });

  it('still closes a connection whose client keeps sending past the drain allowance', async () => {
    const url = new URL(t.baseUrl);
    const closed = await new Promise<{ text: string; sentMb: number }>((resolve) => {
      // Half-open allowed: this client does not stop sending when the service ends its side.
      const socket = net.connect({ port: Number(url.port), host: url.hostname, allowHalfOpen: true });
      let text = '';
      let sent = 0;
      const chunk = Buffer.alloc(256 * 1024, 'A');
      socket.on('data', (d) => (text += d.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve({ text, sentMb: sent / (1024 * 1024) }));
      const pump = () => {
        // A body announced at 1 GB: far more than the service drains.
        while (!socket.destroyed && socket.write(chunk)) sent += chunk.length;
        if (!socket.destroyed) socket.once('drain', pump);
      };
      socket.on('connect', () => {
        socket.write(
          `POST /checkout/order/create HTTP/1.1\r\nHost: x\r\napi-key: ${m.keys.test.publicKey}\r\nContent-Type: application/json\r\nContent-Length: ${1024 ** 3}\r\n\r\n`,
        );
        pump();
      });
    });
    expect(closed.text).toMatch(/^HTTP\/1\.1 413 /);
    // Drained up to the allowance (plus what the two kernels buffer), then closed: far short of the announced gigabyte.
    expect(closed.sentMb).toBeGreaterThan(5);
    expect(closed.sentMb).toBeLessThan(DRAIN_LIMITS.bytes / 2 ** 20 + 48);
  });
});
