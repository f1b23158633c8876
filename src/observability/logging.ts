import { LogController, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Requests of this route are logged at debug, not info: health checks and static files, which would drown the rest. */
    quietLog?: boolean;
  }
}

const CENSOR = '[redacted]';

/**
 * Header paths that must never reach a log line (pino's redaction, applied to the serialized
 * request and response). Bodies are never logged at all.
 */
export const LOG_REDACTIONS = [
  'req.headers["api-key"]',
  'req.headers["x-admin-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
];

/**
 * Keys whose values are secrets or card data wherever they appear in a logged object, at any
 * depth: card number (pan), security code, expiry, api keys, admin and metrics tokens,
 * private and encryption keys, webhook secrets, the master key, passwords, cookies.
 */
const SECRET_KEY =
  /^(card_?number|pan|cvv2?|cvc|security_?code|expiry(_?(month|year|date))?|exp_?(month|year)|api[-_]?key|x-admin-token|admin_?token|metrics_?token|authorization|cookie|set-cookie|password|passphrase|.*secret|master_?key|private_?key|encryption_?key|secret_?key|otp|token)$/i;

/** A run of 13 to 19 digits (spaces or dashes between groups allowed), a possible card number. */
const DIGIT_RUN = /\b\d(?:[ -]?\d){12,18}\b/g;
/** The service's own api keys, whole. */
const API_KEY = /PGW-(?:PUBLICKEY|SECRETKEY)-(?:TEST|LIVE)-[0-9a-f]{32}/g;
/** Webhook signing secrets (Standard Webhooks' `whsec_` form). */
const WEBHOOK_SECRET = /whsec_[A-Za-z0-9+/=]{8,}/g;
/** 64 hex digits: the master key's form (and any other 256-bit secret written in hex). */
const HEX_256 = /\b[0-9a-fA-F]{64}\b/g;
/** PEM blocks of private keys. */
const PEM_PRIVATE = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

/** Masks what looks like a card number, an api key, a webhook secret, a hex master key or a private key inside free text (error messages, stacks). */
export function scrubText(text: string): string {
  return text
    .replace(PEM_PRIVATE, CENSOR)
    .replace(API_KEY, CENSOR)
    .replace(WEBHOOK_SECRET, CENSOR)
    .replace(HEX_256, CENSOR)
    .replace(DIGIT_RUN, (run) => (luhn(run.replace(/[ -]/g, '')) ? CENSOR : run));
}

/** A copy of a logged value with secret keys censored and free text scrubbed, at any depth (cycles and depth bounded). */
export function scrubValue(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 8 || seen.has(value)) return '[…]';
  seen.add(value);
  if (value instanceof Error) return serializeError(value, depth, seen);
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1, seen));
  if (value instanceof Date || Buffer.isBuffer(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[key] = SECRET_KEY.test(key) ? CENSOR : scrubValue(v, depth + 1, seen);
  return out;
}

/** An error as a log line shows it: type, message, code, stack and cause, scrubbed; never its other fields (a driver's parameters, a request's options). */
function serializeError(err: Error, depth = 0, seen = new WeakSet<object>()): Record<string, unknown> {
  const e = err as Error & { code?: unknown; cause?: unknown };
  const out: Record<string, unknown> = { type: err.constructor?.name ?? err.name, message: scrubText(String(err.message)) };
  if (typeof e.code === 'string' || typeof e.code === 'number') out.code = e.code;
  if (err.stack) out.stack = scrubText(err.stack);
  if (e.cause !== undefined && depth < 4) out.cause = scrubValue(e.cause, depth + 1, seen);
  return out;
}

const SERIALIZED = new Set(['req', 'res', 'err']);

function redactQuery(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : `${url.slice(0, q)}?[redacted]`;
}

/**
 * One JSON object per line (pino, as Fastify runs it): `level`, `time`, `pid`, `hostname`,
 * `reqId` on every line logged for a request, `msg`, and the fields of the line. Requests are
 * logged by method, path (the query string is redacted: payment-link pages carry references
 * there), id and client address only; bodies never. See docs/observability.md.
 */
export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: LOG_REDACTIONS, censor: CENSOR },
    formatters: {
      // Every field of every line, at any depth, before pino writes it.
      log: (object: Record<string, unknown>) => {
        const out: Record<string, unknown> = {};
        for (const [key, value] of Object.entries(object)) {
          // req, res and err have serializers of their own (below), which pino applies next.
          if (SERIALIZED.has(key)) out[key] = value;
          else out[key] = SECRET_KEY.test(key) ? CENSOR : scrubValue(value);
        }
        return out;
      },
    },
    serializers: {
      req: (req: { method: string; url: string; id: string; ip?: string }) => ({ method: req.method, url: redactQuery(req.url), id: req.id, ip: req.ip }),
      err: (err: Error) => serializeError(err) as { type: string; message: string; stack: string },
    },
  };
}

/** The level a request's own lines are logged at, from the route the router matched (never the raw URL). */
function requestLevel(request: FastifyRequest): 'debug' | 'info' {
  return request.routeOptions?.config?.quietLog ? 'debug' : 'info';
}

/** What `request completed` says of a request: its method, the matched route pattern (null when none matched), status and time in ms. */
function completion(request: FastifyRequest, reply: FastifyReply): Record<string, unknown> {
  return { method: request.method, route: request.routeOptions?.url ?? null, status: reply.statusCode, responseTime: reply.elapsedTime };
}

/**
 * Fastify's two lines of every request, `incoming request` (the request as the `req`
 * serializer shows it) and `request completed` (see `completion`), at debug for routes marked
 * `quietLog` (health checks, static files) and at info otherwise; a request that errored
 * is logged at error as Fastify does. Fastify's other lines are left as they are.
 */
export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log[requestLevel(request)]({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    if (error) reply.log.error({ ...completion(request, reply), err: error }, 'request errored');
    else reply.log[requestLevel(request)](completion(request, reply), 'request completed');
  }
}
