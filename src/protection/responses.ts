import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../rest/envelopes';

export const TOO_MANY_REQUESTS = 'Too many requests, please try again later';

/** True for the GraphQL endpoint, whose clients read errors as GraphQL errors. */
export function isGraphqlPath(url: string): boolean {
  const q = url.indexOf('?');
  return (q === -1 ? url : url.slice(0, q)) === '/graphql';
}

/**
 * HTTP 429 with `Retry-After` (seconds): the REST error body everywhere, and on /graphql a
 * GraphQL error with `extensions.code` `RATE_LIMITED`.
 */
export function sendTooManyRequests(request: FastifyRequest, reply: FastifyReply, retryAfterSeconds: number): FastifyReply {
  reply.code(429).header('retry-after', String(retryAfterSeconds)).type('application/json; charset=utf-8');
  if ((request.raw as { upgrade?: boolean }).upgrade) {
    // A refused WebSocket upgrade: its socket belongs to no HTTP parser any more, so close it once answered.
    reply.header('connection', 'close');
    reply.raw.once('finish', () => request.raw.socket.destroy());
  }
  if (isGraphqlPath(request.url)) {
    return reply.send({ errors: [{ message: TOO_MANY_REQUESTS, extensions: { code: 'RATE_LIMITED', retryAfterSeconds } }] });
  }
  return reply.send(errorBody('429', TOO_MANY_REQUESTS));
}
