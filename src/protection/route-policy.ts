import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../rest/envelopes';

/**
 * How a route answers: the REST envelope (the default), GraphQL errors, or an HTML page. Every
 * error shape and every per-route header is chosen by the family of the route the router
 * matched, never by looking at the raw request URL, which has many spellings for one route.
 */
export type RouteFamily = 'rest' | 'graphql' | 'page';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's family (default `rest`). */
    family?: RouteFamily;
    /** A POST that is a card attempt on a payment-link page: counted per link, the link named by this route param. */
    cardAttemptParam?: string;
    /** For an alias route (`/payment/…`), the route pattern it stands for: limits and idempotency count it as that route. */
    canonicalUrl?: string;
  }
}

/** The security headers of the hosted checkout pages: never cached, never framed, no referrer, own CSP. */
export const CHECKOUT_PAGE_CSP =
  "default-src 'self'; img-src 'self' https: data:; style-src 'self'; script-src 'self'; connect-src 'self'; form-action 'self' https: http:; frame-ancestors 'none'";

export const BAD_REQUEST_TARGET = 'The request URL is not valid.';

/** The family of the matched route; `rest` when nothing matched (the not-found answer is REST's). */
export function routeFamily(request: FastifyRequest): RouteFamily {
  return request.routeOptions?.config?.family ?? 'rest';
}

/** The route pattern a request counts as: the canonical route of an alias, else the matched pattern. */
export function canonicalRoute(request: FastifyRequest): string | undefined {
  const options = request.routeOptions;
  return options?.config?.canonicalUrl ?? options?.url;
}

/** The payment link a card attempt is made on, as the route's handler reads it (its decoded param); undefined if not one. */
export function cardAttemptLink(request: FastifyRequest): string | undefined {
  const param = request.routeOptions?.config?.cardAttemptParam;
  if (param === undefined || request.method !== 'POST') return undefined;
  const value = (request.params as Record<string, unknown> | undefined)?.[param];
  return typeof value === 'string' ? value : undefined;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/**
 * Why a request target is refused, or undefined when it is an ordinary origin-form path. The
 * router accepts more than that: the absolute form (`http://host/pay/x`), `*`, and paths in
 * which unreserved characters are percent-encoded (`/%70ay/x`), all routed as the plain path.
 * No client needs them (RFC 3986 says unreserved characters are never to be encoded) and
 * each is one more spelling of a route; refused, a route has exactly one way to be named.
 */
export function requestTargetProblem(target: string): string | undefined {
  if (!target.startsWith('/')) return 'not an origin-form path';
  const q = target.indexOf('?');
  const path = q === -1 ? target : target.slice(0, q);
  for (const m of path.matchAll(/%([0-9A-Fa-f]{2})/g)) {
    if (UNRESERVED.test(String.fromCharCode(parseInt(m[1], 16)))) return 'an unreserved character is percent-encoded';
  }
  return undefined;
}

/** Sets the checkout pages' security headers on a reply. */
export function withPageHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('cache-control', 'no-store')
    .header('x-frame-options', 'DENY')
    .header('referrer-policy', 'no-referrer')
    .header('content-security-policy', CHECKOUT_PAGE_CSP);
}

/** A refused WebSocket upgrade: its socket belongs to no HTTP parser any more, so it is closed once answered. */
export function closeIfUpgrade(request: FastifyRequest, reply: FastifyReply): void {
  if (!(request.raw as { upgrade?: boolean }).upgrade) return;
  reply.header('connection', 'close');
  reply.raw.once('finish', () => request.raw.socket.destroy());
}

/** A 400 in the shape of the matched route's family: REST envelope, GraphQL `BAD_REQUEST`, or a plain page. */
export function sendBadRequest(request: FastifyRequest, reply: FastifyReply, message: string): FastifyReply {
  closeIfUpgrade(request, reply);
  reply.code(400);
  switch (routeFamily(request)) {
    case 'graphql':
      return reply.type('application/json; charset=utf-8').send({ errors: [{ message, extensions: { code: 'BAD_REQUEST' } }] });
    case 'page':
      return withPageHeaders(reply)
        .type('text/html; charset=utf-8')
        .send(
          `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>Bad request</title></head><body><h1>Bad request</h1><p>${message}</p></body></html>\n`,
        );
    default:
      return reply.type('application/json; charset=utf-8').send(errorBody('VAL400', message));
  }
}

/**
 * The first hooks of every request: a request target that is not an origin-form path, or spells
 * an unreserved character percent-encoded, is refused with 400 before anything counts or
 * answers it; a page route's answers (errors and limits included) carry the page headers.
 * Install before the rate limits and before any route.
 */
export function installRoutePolicy(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    if (requestTargetProblem(request.raw.url ?? '') !== undefined) return sendBadRequest(request, reply, BAD_REQUEST_TARGET);
    if (routeFamily(request) === 'page') withPageHeaders(reply);
    return undefined;
  });
}
