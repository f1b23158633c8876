import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { DomainError, isUnstorableText, UNSTORABLE_TEXT } from '../shared/errors';
import { PAYLOAD_DECRYPTION_FAILED, PayloadDecryptionError } from '../crypto/payload-decryptor';
import { httpStatusFor } from './envelopes';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/unavailable';
import { errorBody, sendFailure } from '../protection/failure-shapes';
import { ProcessorCallFailure } from '../payments/processor-time-limit';

export function sendError(reply: FastifyReply, code: string, message: string): FastifyReply {
  return reply.code(httpStatusFor(code)).send(errorBody(code, message));
}

/**
 * One place maps every failure to the legacy error shape: domain errors by their code,
 * decryption failures to one identical body, framework errors (bad JSON, oversized body,
 * wrong media type) to documented codes, and anything unexpected to a 500 that is logged
 * but says nothing of its cause.
 */
export function installRestErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    if (error instanceof DomainError) return sendError(reply, error.code, error.message);
    if (isUnstorableText(error)) return sendError(reply, 'VAL400', UNSTORABLE_TEXT);
    if (error instanceof PayloadDecryptionError) return sendError(reply, '400', PAYLOAD_DECRYPTION_FAILED);
    const fe = error as FastifyError;
    switch (fe.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return sendError(reply, 'VAL400', 'The request body is not valid JSON.');
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendError(reply, '413', 'The request body is too large.');
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendError(reply, '415', 'Content-Type must be application/json.');
    }
    if (fe.validation) return sendError(reply, 'VAL400', validationMessage(fe));
    if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
      return sendError(reply, 'VAL400', 'The request is not valid.');
    }
    if (error instanceof ProcessorCallFailure) {
      // The acquirer did not answer in time (504: the outcome is settled later from its record),
      // or could not be reached before anything was recorded (503: send the request again).
      request.log.warn({ err: error }, error.logLine);
      if (error.retryAfterSeconds !== null) reply.header('retry-after', String(error.retryAfterSeconds));
      const status = error.httpStatus;
      return sendFailure(request, reply, {
        status,
        code: String(status),
        graphqlCode: error.code,
        message: error.message,
        extensions: { requestId: request.id },
      });
    }
    if (isDatabaseUnavailable(error)) {
      // Not a bug: the database is unreachable (readiness says so too). Clients retry later.
      request.log.warn({ err: error }, 'database unavailable');
      reply.header('retry-after', '5');
      return sendFailure(request, reply, {
        status: 503,
        code: '503',
        graphqlCode: 'SERVICE_UNAVAILABLE',
        message: DATABASE_UNAVAILABLE_MESSAGE,
        extensions: { requestId: request.id },
      });
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, '500', 'An unexpected error occurred, please try again later.');
  });

  app.setNotFoundHandler((_request, reply) => sendError(reply, '404', 'The requested resource was not found.'));
}

function validationMessage(error: FastifyError): string {
  const errors = error.validation ?? [];
  const first = errors[0];
  if (!first) return 'The request is not valid.';
  const path = first.instancePath.replace(/^\//, '').replace(/\//g, '.');
  if (!path) return 'The request body must be a JSON object.';
  const expected = errors.find((e) => e.instancePath === first.instancePath && e.keyword === 'type')?.params as { type?: string } | undefined;
  if (expected?.type === 'string' || expected?.type === 'number') return `The ${path} field must be a ${expected.type}.`;
  return `The ${path} field is not valid.`;
}
