import http from 'node:http';
import net from 'node:net';

export interface RawResult {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

/** An HTTP/1.1 request from a chosen loopback source address, so tests can act as distinct clients. */
export function httpFrom(
  baseUrl: string,
  from: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string } = {},
): Promise<RawResult> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: url.hostname,
        port: Number(url.port),
        method,
        path,
        localAddress: from,
        agent: false,
        headers: { ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          let body: unknown;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

/** Writes bytes on a raw socket and collects everything until the server closes it or `waitMs` passes. */
export function rawExchange(
  baseUrl: string,
  chunks: string[],
  waitMs = 2000,
  options: { responses?: number } = {},
): Promise<{ text: string; closedByServer: boolean; elapsedMs: number }> {
  const url = new URL(baseUrl);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let text = '';
    let done = false;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closedByServer, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (d) => {
      text += d.toString('latin1');
      if (options.responses !== undefined && completeResponses(text) >= options.responses) finish(false);
    });
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', () => {
      for (const c of chunks) socket.write(c);
    });
  });
}

/** Status code of the first HTTP response in a raw exchange. */
export function firstStatus(text: string): number {
  const m = /^HTTP\/1\.1 (\d{3})/.exec(text);
  return m ? Number(m[1]) : 0;
}

/** How many complete HTTP responses (headers and Content-Length body) `text` holds. */
export function completeResponses(text: string): number {
  let count = 0;
  let at = 0;
  for (;;) {
    const end = text.indexOf('\r\n\r\n', at);
    if (end === -1) return count;
    const head = text.slice(at, end);
    const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
    if (text.length < end + 4 + length) return count;
    count += 1;
    at = end + 4 + length;
  }
}
