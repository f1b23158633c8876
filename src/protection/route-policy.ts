import type { FastifyReply, FastifyRequest } from 'fastify';

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

/** The family of the matched route; `rest` when nothing matched (the not-found answer is REST's). */
export function routeFamily(request: FastifyRequest): RouteFamily {
  return request.routeOptions?.config?.family ?? 'rest';
}

/** True when the matched route is the GraphQL endpoint, whose clients read errors as GraphQL errors. */
export function isGraphqlRoute(request: FastifyRequest): boolean {
  return routeFamily(request) === 'graphql';
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
