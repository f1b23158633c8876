import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type { LookupFunction, Socket } from 'node:net';
import { hostAddress, WebhookAddressPolicy, type WebhookResolver, type WebhookUrlPolicy } from '../merchants/webhook-url';
import { WebhookDns, type WebhookDnsOptions } from '../merchants/webhook-dns';

/** The part of a receiver's answer kept with each attempt (at most 1 KiB, so a receiver's page never fills the log). */
export const RESPONSE_BODY_LIMIT_BYTES = 1024;

export interface WebhookHttpResult {
  /** The HTTP status, when one arrived in time. */
  statusCode: number | null;
  /** Milliseconds from sending to the status line (or to the failure). */
  latencyMs: number;
  /** Why no status arrived (timeout, refused, refused address, …). */
  error: string | null;
  /** The first 1 KiB of the response body, as text. */
  responseBody: string | null;
  /**
   * When the address rules refused the destination: the addresses refused, for the operators'
   * log only. The error (kept in the delivery log, shown to the merchant) never names them.
   */
  refusedAddresses?: string[];
}

/** The error code of a connection the address rules refused. */
export const ADDRESS_NOT_ALLOWED = 'EADDRNOTALLOWED';

type Refusal = NodeJS.ErrnoException & { addresses: string[] };

/**
 * The error of a refused connection. Its message names the host as the URL gives it and never
 * an address it resolved or connected to (the merchant reads the message; where the name leads
 * inside the network is none of theirs); the addresses travel beside it for the operators' log.
 */
function refusal(message: string, addresses: string[]): Refusal {
  return Object.assign(new Error(`refused: ${message}`), { code: ADDRESS_NOT_ALLOWED, addresses });
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | Array<{ address: string; family: number }>, family?: number) => void;

/**
 * Guards every new connection of an agent: a literal IP host is checked before connecting, a
 * host name's addresses when it is resolved (each new socket resolves again, so DNS rebinding
 * gains nothing; the socket connects to the addresses checked here, never resolving again), and
 * the socket's remote address once connected. Sockets kept alive were
 * all checked when they were opened, by the same rules: the agents belong to one policy.
 */
class ConnectionGuard {
  constructor(
    private readonly policy: WebhookAddressPolicy,
    private readonly resolve: WebhookResolver,
  ) {}

  readonly lookup: LookupFunction = (hostname, options, callback) => {
    const done = callback as unknown as LookupCallback;
    this.resolve(hostname).then(
      (all) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const candidates = all.filter((a) => family === 0 || a.family === family);
        const permitted = candidates.filter((a) => !this.policy.isRefused(a.address));
        if (permitted.length === 0) {
          const addresses = candidates.map((a) => a.address);
          const reason = addresses.length ? 'resolves to a non-public address' : 'resolves to no usable address';
          return done(refusal(`${hostname} ${reason}`, addresses), '', 0);
        }
        if (options.all) return done(null, permitted);
        return done(null, permitted[0]!.address, permitted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => done(err, '', 0),
    );
  };

  /** Null when the connection may go ahead; otherwise the reason. */
  check(host: string | null | undefined): NodeJS.ErrnoException | null {
    const ip = host ? hostAddress(host) : null;
    if (ip !== null && this.policy.isRefused(ip)) return refusal(`${host} is a non-public address`, [ip]);
    if (ip === null && host && this.policy.isRefusedName(host)) return refusal(`${host} names this machine, a non-public address`, []);
    return null;
  }

  /** Destroys the socket when the address it actually connected to is refused. */
  watch(socket: Duplex | undefined, host: string | null | undefined): void {
    const s = socket as Socket | undefined;
    s?.once?.('connect', () => {
      const remote = s.remoteAddress;
      if (!remote || this.policy.isRefused(remote)) s.destroy(refusal(`${host ?? 'the host'} connected to a non-public address`, remote ? [remote] : []));
    });
  }
}

type CreateConnection = (options: http.ClientRequestArgs, callback?: (err: Error | null, socket: Duplex) => void) => Duplex | undefined;

function guardAgent<A extends http.Agent>(agent: A, guard: ConnectionGuard): A {
  const original = (agent as unknown as { createConnection: CreateConnection }).createConnection.bind(agent);
  (agent as unknown as { createConnection: CreateConnection }).createConnection = (options, callback) => {
    const host = options.host ?? options.hostname;
    const refused = guard.check(host);
    if (refused) {
      // The agent then fails the request with this error; nothing is sent anywhere.
      process.nextTick(() => callback?.(refused, undefined as unknown as Duplex));
      return undefined;
    }
    const socket = original({ ...options, lookup: guard.lookup }, callback);
    guard.watch(socket, host);
    return socket;
  };
  return agent;
}

export interface WebhookHttpClientOptions {
  /** Host name resolution (default: a `WebhookDns` with the `dns` options); tests inject their own. */
  resolve?: WebhookResolver;
  /** The default resolution's settings: nameservers (tests name a server of their own), timeout, tries, look-ups at once. */
  dns?: WebhookDnsOptions;
}

/**
 * POSTs webhooks under one address policy: never to the service's own network (unless its
 * network is exempted), checked on every address actually connected to, in both environments.
 */
export class WebhookHttpClient {
  private readonly http: http.Agent;
  private readonly https: https.Agent;

  constructor(policy: WebhookUrlPolicy, options: WebhookHttpClientOptions = {}) {
    const resolve = options.resolve ?? policy.resolve ?? new WebhookDns(options.dns).resolve;
    const guard = new ConnectionGuard(WebhookAddressPolicy.of(policy), resolve);
    this.http = guardAgent(new http.Agent({ keepAlive: true, maxSockets: 64 }), guard);
    this.https = guardAgent(new https.Agent({ keepAlive: true, maxSockets: 64 }), guard);
  }

  /** Closes the kept-alive sockets. */
  close(): void {
    this.http.destroy();
    this.https.destroy();
  }

  /**
   * POSTs one webhook: the exact body, the given headers, no redirects followed, one hard
   * deadline for the whole exchange (resolution, connection, answer). Never throws: every
   * outcome is a result.
   */
  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<WebhookHttpResult> {
    const started = process.hrtime.bigint();
    const elapsed = () => Math.round(Number(process.hrtime.bigint() - started) / 1e6);
    return new Promise<WebhookHttpResult>((resolve) => {
      let settled = false;
      let statusCode: number | null = null;
      let latencyMs = 0;
      const chunks: Buffer[] = [];
      let size = 0;
      let req: http.ClientRequest | undefined;
      let timer: NodeJS.Timeout | undefined;
      let refusedAddresses: string[] | undefined;
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
          ...(refusedAddresses && statusCode === null ? { refusedAddresses } : {}),
        });
      };

      let target: URL;
      try {
        target = new URL(url);
      } catch {
        finish('invalid URL');
        return;
      }
      if (target.protocol !== 'http:' && target.protocol !== 'https:') {
        finish('invalid URL');
        return;
      }
      const secure = target.protocol === 'https:';
      const payload = Buffer.from(body, 'utf8');
      // The deadline holds whatever the receiver does (trickling, hanging, never closing).
      timer = setTimeout(() => {
        const error = `timeout after ${timeoutMs} ms`;
        req?.destroy(new Error(error));
        finish(error);
      }, timeoutMs);
      try {
        req = (secure ? https : http).request(target, {
          method: 'POST',
          agent: secure ? this.https : this.http,
          headers: { ...headers, 'content-length': String(payload.length) },
        });
      } catch (err) {
        finish(err instanceof Error ? err.message : String(err));
        return;
      }

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
        if (err.code === ADDRESS_NOT_ALLOWED) refusedAddresses = (err as Refusal).addresses;
        finish(describeError(err));
      });
      req.end(payload);
    });
  }
}

function describeError(err: NodeJS.ErrnoException): string {
  if (err.code && err.code !== ADDRESS_NOT_ALLOWED && !err.message.includes(err.code)) return `${err.code}: ${err.message}`;
  return err.message;
}

/** PostgreSQL text cannot hold NUL; keep lengths bounded. */
function cleanText(text: string): string {
  return text.replace(/\u0000/g, '').slice(0, RESPONSE_BODY_LIMIT_BYTES);
}
