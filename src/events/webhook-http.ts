import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { isInternalAddress } from './webhook-url';

/** The part of a receiver's answer kept with each attempt. */
export const RESPONSE_BODY_LIMIT_BYTES = 2048;

export interface WebhookHttpResult {
  /** The HTTP status, when one arrived in time. */
  statusCode: number | null;
  /** Milliseconds from sending to the status line (or to the failure). */
  latencyMs: number;
  /** Why no status arrived (timeout, refused, refused address, …). */
  error: string | null;
  /** The first 2 KiB of the response body, as text. */
  responseBody: string | null;
}

export interface WebhookHttpOptions {
  timeoutMs: number;
  /** Refuse to connect when the host name resolves to an internal address (live environment). */
  refuseInternalAddresses: boolean;
}

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

/**
 * A DNS lookup that fails when any address of the name is internal, so a public-looking host
 * name cannot lead a live webhook into the gateway's own network (also after DNS rebinding:
 * the check runs on the addresses actually connected to).
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) return (callback as (e: NodeJS.ErrnoException | null, a: string, f: number) => void)(err, '', 0);
    const list = addresses as dns.LookupAddress[];
    const internal = list.find((a) => isInternalAddress(a.address));
    if (internal || list.length === 0) {
      const refused: NodeJS.ErrnoException = new Error(`refused: ${hostname} resolves to an internal address`);
      refused.code = 'EADDRNOTALLOWED';
      return (callback as (e: NodeJS.ErrnoException | null, a: string, f: number) => void)(refused, '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: dns.LookupAddress[]) => void)(null, list);
    return (callback as (e: null, a: string, f: number) => void)(null, list[0]!.address, list[0]!.family);
  });
};

/**
 * POSTs one webhook: the exact body, the given headers, no redirects followed, one deadline
 * for the whole exchange. Never throws: every outcome is a result.
 */
export function postWebhook(url: string, body: string, headers: Record<string, string>, options: WebhookHttpOptions): Promise<WebhookHttpResult> {
  const started = process.hrtime.bigint();
  const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
  return new Promise<WebhookHttpResult>((resolve) => {
    let settled = false;
    let statusCode: number | null = null;
    let latencyMs = 0;
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      const text = chunks.length ? Buffer.concat(chunks).subarray(0, RESPONSE_BODY_LIMIT_BYTES).toString('utf8') : null;
      resolve({
        statusCode,
        latencyMs: statusCode === null ? elapsed() : latencyMs,
        error: statusCode === null ? cleanText(error ?? 'no response') : null,
        responseBody: text === null ? null : cleanText(text),
      });
    };

    let target: URL;
    try {
      target = new URL(url);
    } catch {
      finish('invalid URL');
      return;
    }
    const secure = target.protocol === 'https:';
    const payload = Buffer.from(body, 'utf8');
    let req: http.ClientRequest;
    try {
      req = (secure ? https : http).request(target, {
        method: 'POST',
        agent: secure ? agents.https : agents.http,
        headers: { ...headers, 'content-length': String(payload.length) },
        lookup: options.refuseInternalAddresses ? guardedLookup : undefined,
      });
    } catch (err) {
      finish(err instanceof Error ? err.message : String(err));
      return;
    }
    const timer = setTimeout(() => {
      req.destroy(new Error(`timeout after ${options.timeoutMs} ms`));
    }, options.timeoutMs);

    req.on('response', (res) => {
      statusCode = res.statusCode ?? null;
      latencyMs = elapsed();
      res.on('data', (chunk: Buffer) => {
        if (size >= RESPONSE_BODY_LIMIT_BYTES) return;
        chunks.push(chunk);
        size += chunk.length;
        // Enough kept: stop reading (the connection is not reused).
        if (size >= RESPONSE_BODY_LIMIT_BYTES) {
          res.destroy();
          finish(null);
        }
      });
      res.on('end', () => finish(null));
      res.on('error', () => finish(null));
      res.on('close', () => finish(null));
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      finish(describeError(err));
    });
    req.end(payload);
  });
}

function describeError(err: NodeJS.ErrnoException): string {
  if (err.code && !err.message.includes(err.code)) return `${err.code}: ${err.message}`;
  return err.message;
}

/** PostgreSQL text cannot hold NUL; keep lengths bounded. */
function cleanText(text: string): string {
  return text.replace(/\u0000/g, '').slice(0, RESPONSE_BODY_LIMIT_BYTES);
}
