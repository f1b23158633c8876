import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendFailure } from './failure-shapes';
import { closeIfUpgrade, routeFamily, withPageHeaders } from './route-policy';

export const BAD_REQUEST_TARGET = 'The request URL is not valid.';

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

/** A 400 in the shape of the matched route's family: REST envelope, GraphQL `BAD_REQUEST`, or a plain page. */
export function sendBadRequest(request: FastifyRequest, reply: FastifyReply, message: string): FastifyReply {
  closeIfUpgrade(request, reply);
  return sendFailure(request, reply, { status: 400, code: 'VAL400', graphqlCode: 'BAD_REQUEST', message, pageTitle: 'Bad request' });
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
