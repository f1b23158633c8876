import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from '../rest/envelopes';

/**
 * Errors Fastify raises before a route is found. Its own answers quote the URL back (a 414
 * for a path segment over 100 characters, a 400 for a malformed percent-encoding); these say
 * what is wrong in the documented error shape and echo nothing of the request.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // Raised before the onRequest hooks that set it on every other answer.
  reply.header('x-request-id', request.id);
  switch (error.code) {
    case 'FST_ERR_MAX_PARAM_LENGTH':
      reply.code(414).send(errorBody('414', 'The request URL is too long.'));
      return;
    case 'FST_ERR_BAD_URL':
      reply.code(400).send(errorBody('VAL400', 'The request URL is not valid.'));
      return;
    default:
      request.log.error({ err: error }, 'routing failed');
      reply.code(500).send(errorBody('500', 'An unexpected error occurred, please try again later.'));
  }
}
