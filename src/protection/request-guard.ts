import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context';
import { DomainError } from '../shared/errors';
import type { Tenant } from '../merchants/tenant';
import { clientIdentity } from './client-address';
import { RateLimits } from './rate-limits';
import { sendTooManyRequests, sendUnavailable } from './responses';
import type { Count } from './counter-store';
import type { Verdict } from './rate-limiter';
import { cardAttemptLink, isGraphqlRoute } from './route-policy';

declare module 'fastify' {
  interface FastifyInstance {
    /** The instance's rate limits; null when RATE_LIMIT=off. */
    rateLimits: RateLimits | null;
  }
}

/**
 * Installs the rate limits as one onRequest hook on every route (REST, GraphQL over HTTP,
 * WebSocket upgrades, pages), so no route can be forgotten:
 *
 * 1. A request with an `api-key` header that authenticated within the current window counts
 *    against that key only. A key not seen yet is looked up once (the tenant is handed to the
 *    route, so REST does not look it up twice); valid, it counts against the key; invalid,
 *    it is a failed authentication of the client IP and a request without a valid key.
 * 2. While an IP is over its failed-authentication limit, it gets 429 for every new key it
 *    presents, and for WebSocket upgrades, without any lookup: guesses go unanswered.
 * 3. A wrong `x-admin-token` is a failed authentication too.
 * 4. Everything without a valid key counts against the client IP.
 * 5. POSTs to a route marked as a card attempt (the payment-link page) are counted per link and
 *    per IP, whatever key comes with them (public keys are public). The link is the route param
 *    the router matched, decoded as the handler reads it: one link, one counter, however the
 *    request spelled it.
 *
 * Each request's counts go to the store in one call (one round trip when the counters are in
 * Redis); a store that cannot answer lets the request through unless it is a card attempt,
 * which is refused with 503 (RateLimits).
 */
export function installRateLimits(app: FastifyInstance, ctx: AppContext, limits: RateLimits): void {
  const adminDigest = ctx.config.adminToken ? digest(ctx.config.adminToken) : undefined;

  /**
   * Counts the request against its key or its IP (and failed authentications), then the card
   * attempt it may be (`card`), in one call to the store where it can: the first refusal, else allowed.
   */
  const admit = async (request: FastifyRequest, ip: string, card: Count[]): Promise<Verdict> => {
    const adminToken = single(request.headers['x-admin-token']);
    if (adminToken !== undefined && adminToken !== '' && (adminDigest === undefined || !timingSafeEqual(digest(adminToken), adminDigest))) {
      const failed = await limits.count([{ limit: limits.authFailures, key: ip }]);
      if (!failed.allowed) return failed;
    }

    const apiKey = single(request.headers['api-key']);
    if (apiKey !== undefined && apiKey.trim() !== '') {
      const id = RateLimits.keyId(apiKey);
      const byKey = [{ limit: limits.perKey, key: id }, ...card];
      if (limits.knownKey(id)) return limits.count(byKey);
      const blocked = await limits.check(limits.authFailures, ip);
      if (!blocked.allowed) return blocked;
      const tenant = await tryAuthenticate(ctx, apiKey);
      if (tenant) {
        request.tenant = tenant;
        limits.rememberKey(id);
        return limits.count(byKey);
      }
      // A failed authentication of the IP, then a request without a valid key.
      return limits.count([{ limit: limits.authFailures, key: ip }, { limit: limits.perIp, key: ip }, ...card]);
    } else if (isWebSocketUpgrade(request)) {
      // The key of a WebSocket arrives after the upgrade; an IP that keeps failing gets no socket.
      const blocked = await limits.check(limits.authFailures, ip);
      if (!blocked.allowed) return blocked;
    }
    return limits.count([{ limit: limits.perIp, key: ip }, ...card]);
  };

  app.addHook('onRequest', async (request, reply) => {
    const ip = clientIdentity(request.ip);
    // Card attempts count whatever key is presented: public keys are public, they must not lift this limit.
    const link = cardAttemptLink(request);
    const card =
      link === undefined
        ? []
        : [
            { limit: limits.cardPerIp, key: ip },
            { limit: limits.cardPerLink, key: link },
          ];
    const verdict = await admit(request, ip, card);
    if (verdict.allowed) return undefined;
    if (verdict.unavailable) {
      request.log.error('card attempt refused: the rate-limit counters cannot be reached');
      return sendUnavailable(request, reply, verdict.retryAfterSeconds);
    }
    return sendTooManyRequests(request, reply, verdict.retryAfterSeconds);
  });
}

/**
 * Counts a failed authentication that happened outside the HTTP headers (the api-key of a
 * WebSocket in its connection parameters, a sign-in form). Does nothing when RATE_LIMIT=off.
 */
export async function noteFailedAuthentication(request: FastifyRequest): Promise<void> {
  const limits = request.server.rateLimits;
  if (limits) await limits.count([{ limit: limits.authFailures, key: clientIdentity(request.ip) }]);
}

/**
 * Seconds to wait when the client IP is over its failed-authentication limit, else undefined:
 * for credentials that arrive in a body (the dashboard's sign-in form), checked before they are.
 */
export async function failedAuthenticationsBlocked(request: FastifyRequest): Promise<number | undefined> {
  const limits = request.server.rateLimits;
  if (!limits) return undefined;
  const verdict = await limits.check(limits.authFailures, clientIdentity(request.ip));
  return verdict.allowed ? undefined : verdict.retryAfterSeconds;
}

/**
 * Counts a request for a password-reset email (an operation that needs no key) against the
 * client IP and against the email asked for (trimmed, lower-case, counted under a digest).
 * Returns the seconds to wait when either is over its limit, else undefined (always undefined
 * when RATE_LIMIT=off).
 */
export async function countPasswordResetRequest(request: FastifyRequest, email: string): Promise<number | undefined> {
  const limits = request.server.rateLimits;
  if (!limits) return undefined;
  const verdict = await limits.count([
    { limit: limits.passwordResetsPerIp, key: clientIdentity(request.ip) },
    { limit: limits.passwordResetsPerEmail, key: RateLimits.keyId(email.trim().toLowerCase()) },
  ]);
  return verdict.allowed ? undefined : verdict.retryAfterSeconds;
}

/**
 * Counts one operation sent over an open WebSocket against the socket's api-key, like an HTTP
 * request with that key: a socket is no way around the per-key limit. Returns the seconds to
 * wait when over the limit, else undefined (always undefined when RATE_LIMIT=off).
 */
export async function countSocketOperation(request: FastifyRequest, apiKey: string | undefined): Promise<number | undefined> {
  const limits = request.server.rateLimits;
  if (!limits) return undefined;
  const count = apiKey ? { limit: limits.perKey, key: RateLimits.keyId(apiKey) } : { limit: limits.perIp, key: clientIdentity(request.ip) };
  const verdict = await limits.count([count]);
  return verdict.allowed ? undefined : verdict.retryAfterSeconds;
}

async function tryAuthenticate(ctx: AppContext, apiKey: string): Promise<Tenant | undefined> {
  try {
    return await ctx.services.auth.authenticate(apiKey);
  } catch (err) {
    if (err instanceof DomainError) return undefined;
    throw err;
  }
}

function isWebSocketUpgrade(request: FastifyRequest): boolean {
  return isGraphqlRoute(request) && typeof request.headers.upgrade === 'string' && /\bwebsocket\b/i.test(request.headers.upgrade);
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
