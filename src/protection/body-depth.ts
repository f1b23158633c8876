import type { FastifyInstance } from 'fastify';
import { nestedDeeperThan } from '../shared/nesting';
import { sendFailure } from './failure-shapes';

/** Deepest nesting of objects and arrays a JSON body may have; real bodies stay under ten. */
export const MAX_BODY_DEPTH = 64;
export const BODY_TOO_DEEP = `The request body is nested too deeply (at most ${MAX_BODY_DEPTH} levels).`;

/**
 * Refuses bodies nested deeper than MAX_BODY_DEPTH before any route sees them. JSON.parse copes
 * with tens of thousands of levels, but the recursive code after it (serialising a body for an
 * idempotency fingerprint, validation, logging) runs out of stack and the client would get a 500.
 * Runs on every route; costs one walk over the parsed body.
 */
export function installBodyDepthLimit(app: FastifyInstance): void {
  app.addHook('preValidation', async (request, reply) => {
    const body = request.body;
    if (body === null || typeof body !== 'object' || !nestedDeeperThan(body, MAX_BODY_DEPTH)) return undefined;
    return sendFailure(request, reply, { status: 400, code: 'VAL400', graphqlCode: 'BAD_REQUEST', message: BODY_TOO_DEEP });
  });
}
