import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody } from './failure-shapes';
import { BAD_REQUEST_TARGET } from './request-target';

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
      reply.code(400).send(errorBody('VAL400', BAD_REQUEST_TARGET));
      return;
    default:
      request.log.error({ err: error }, 'routing failed');
      reply.code(500).send(errorBody('500', 'An unexpected error occurred, please try again later.'));
  }
}

const CLIENT_ERRORS: Record<string, [number, string, Record<string, string>]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request Timeout', errorBody('408', 'The request did not arrive in time.')],
  HPE_HEADER_OVERFLOW: [431, 'Request Header Fields Too Large', errorBody('431', 'The request headers are too large.')],
  // A request target the parser refuses: the authority form (`host:port`), or characters no URL has.
  HPE_INVALID_URL: [400, 'Bad Request', errorBody('VAL400', BAD_REQUEST_TARGET)],
};
const NOT_HTTP: [number, string, Record<string, string>] = [400, 'Bad Request', errorBody('VAL400', 'The request is not valid HTTP.')];

/**
 * Requests Node's HTTP parser refuses before Fastify sees them (Fastify's own answer has
 * another shape): answered in the documented error shape, then the connection is closed.
 */
export function clientErrors(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, reason, body] = CLIENT_ERRORS[error.code ?? ''] ?? NOT_HTTP;
  const text = JSON.stringify(body);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}
