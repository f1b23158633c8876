import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../rest/envelopes';
import { closeIfUpgrade, routeFamily } from './route-policy';

export const TOO_MANY_REQUESTS = 'Too many requests, please try again later';

/** True when the matched route is the GraphQL endpoint, whose clients read errors as GraphQL errors. */
export function isGraphqlRoute(request: FastifyRequest): boolean {
  return routeFamily(request) === 'graphql';
}

/**
 * HTTP 429 with `Retry-After` (seconds): the REST error body everywhere, and on /graphql a
 * GraphQL error with `extensions.code` `RATE_LIMITED`.
 */
export function sendTooManyRequests(request: FastifyRequest, reply: FastifyReply, retryAfterSeconds: number): FastifyReply {
  reply.code(429).header('retry-after', String(retryAfterSeconds)).type('application/json; charset=utf-8');
  closeIfUpgrade(request, reply);
  if (isGraphqlRoute(request)) {
    return reply.send({ errors: [{ message: TOO_MANY_REQUESTS, extensions: { code: 'RATE_LIMITED', retryAfterSeconds } }] });
  }
  return reply.send(errorBody('429', TOO_MANY_REQUESTS));
}
