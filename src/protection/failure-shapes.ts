import type { FastifyReply, FastifyRequest } from 'fastify';
import { routeFamily, withPageHeaders } from './route-policy';

/** The codes whose errors the legacy interface answers under `status_code`; every other uses `statusCode` (docs/api.md). */
const SNAKE_CASE_CODES = new Set(['13', '100']);

/** The REST failure body: the legacy interface's error envelope, byte for byte (property order included). */
export function errorBody(code: string, message: string): Record<string, string> {
  return SNAKE_CASE_CODES.has(code) ? { status: 'failed', status_code: code, message } : { status: 'failed', statusCode: code, message };
}

/** The GraphQL failure body: one error with its `extensions` (`code` first). */
export function graphqlErrorBody(
  message: string,
  extensions: Readonly<Record<string, unknown>>,
): { errors: Array<{ message: string; extensions: Readonly<Record<string, unknown>> }> } {
  return { errors: [{ message, extensions }] };
}

/** A failure answered before or beside a route's own work (limits, refusals, outages). */
export interface Failure {
  /** The HTTP status. */
  status: number;
  /** The REST envelope's code. */
  code: string;
  /** The GraphQL error's `extensions.code`. */
  graphqlCode: string;
  message: string;
  /** Further GraphQL extensions, after the code (`retryAfterSeconds`, `requestId`). */
  extensions?: Record<string, unknown>;
  /** Page routes answer with a plain HTML page of this title; without one they answer in the REST shape. */
  pageTitle?: string;
}

/**
 * Answers a failure in the shape of the matched route's family: a GraphQL error on the GraphQL
 * route, an HTML page on page routes when the failure has one, else the REST error envelope.
 * Decided on the route the router matched, never on the raw URL.
 */
export function sendFailure(request: FastifyRequest, reply: FastifyReply, failure: Failure): FastifyReply {
  reply.code(failure.status);
  const family = routeFamily(request);
  if (family === 'page' && failure.pageTitle !== undefined) {
    const title = failure.pageTitle;
    return withPageHeaders(reply)
      .type('text/html; charset=utf-8')
      .send(
        `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1><p>${failure.message}</p></body></html>\n`,
      );
  }
  reply.type('application/json; charset=utf-8');
  if (family === 'graphql') return reply.send(graphqlErrorBody(failure.message, { code: failure.graphqlCode, ...failure.extensions }));
  return reply.send(errorBody(failure.code, failure.message));
}
