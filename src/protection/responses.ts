import type { FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError } from 'graphql';
import { DATABASE_UNAVAILABLE_MESSAGE } from '../db/unavailable';
import { sendFailure } from './failure-shapes';
import { closeIfUpgrade } from './route-policy';

export const TOO_MANY_REQUESTS = 'Too many requests, please try again later';

/**
 * HTTP 429 with `Retry-After` (seconds): the REST error body everywhere, and on /graphql a
 * GraphQL error with `extensions.code` `RATE_LIMITED`.
 */
export function sendTooManyRequests(request: FastifyRequest, reply: FastifyReply, retryAfterSeconds: number): FastifyReply {
  reply.header('retry-after', String(retryAfterSeconds));
  closeIfUpgrade(request, reply);
  return sendFailure(request, reply, { status: 429, code: '429', graphqlCode: 'RATE_LIMITED', message: TOO_MANY_REQUESTS, extensions: { retryAfterSeconds } });
}

/**
 * The same refusal raised inside a GraphQL operation (a limit that only the operation's arguments
 * decide): `extensions.code` `RATE_LIMITED` with `retryAfterSeconds`, and over HTTP status 429
 * with `Retry-After` (Apollo reads `extensions.http`; the error formatter drops it from the answer).
 */
export function tooManyRequestsError(retryAfterSeconds: number): GraphQLError {
  return new GraphQLError(TOO_MANY_REQUESTS, {
    extensions: {
      code: 'RATE_LIMITED',
      retryAfterSeconds,
      http: { status: 429, headers: new Map([['retry-after', String(retryAfterSeconds)]]) },
    },
  });
}

/**
 * HTTP 503 with `Retry-After`, in the route's shape (the REST error body, on /graphql a GraphQL
 * error `SERVICE_UNAVAILABLE`): for a request that a limit must see and that cannot be counted.
 */
export function sendUnavailable(request: FastifyRequest, reply: FastifyReply, retryAfterSeconds: number): FastifyReply {
  reply.header('retry-after', String(retryAfterSeconds));
  closeIfUpgrade(request, reply);
  return sendFailure(request, reply, {
    status: 503,
    code: '503',
    graphqlCode: 'SERVICE_UNAVAILABLE',
    message: DATABASE_UNAVAILABLE_MESSAGE,
    extensions: { requestId: request.id },
  });
}
