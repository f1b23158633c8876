import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context';
import { DomainError } from '../shared/errors';
import { httpStatusFor } from './envelopes';
import { errorBody } from '../protection/failure-shapes';
import { tenantOf } from './authentication';
import { canonicalRoute } from '../protection/route-policy';

export interface RestResult {
  status: number;
  body: unknown;
}

export const ok = (body: unknown, status = 200): RestResult => ({ status, body });

/**
 * Runs a route's work and sends its result. With an `Idempotency-Key` header (POST, PATCH)
 * the result, success or documented failure, is stored and replayed for repeats; the
 * fingerprint is the request's meaning (for Encrypted endpoints the whole decrypted plaintext,
 * so a client that re-encrypts on retry is still recognised) on the route matched, an alias
 * counting as its canonical route, keyed (IdempotencyService.fingerprint).
 */
export async function respond(
  ctx: AppContext,
  request: FastifyRequest,
  reply: FastifyReply,
  fingerprint: unknown,
  work: () => Promise<RestResult>,
): Promise<FastifyReply> {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  const run = async (): Promise<{ status: number; body: string }> => {
    try {
      const result = await work();
      return { status: result.status, body: JSON.stringify(result.body) };
    } catch (err) {
      if (err instanceof DomainError) return { status: httpStatusFor(err.code), body: JSON.stringify(errorBody(err.code, err.message)) };
      throw err;
    }
  };
  if (key === undefined || (request.method !== 'POST' && request.method !== 'PATCH')) {
    const result = await run();
    return reply.code(result.status).type('application/json; charset=utf-8').send(result.body);
  }
  const stored = await ctx.services.idempotency.run(
    tenantOf(request),
    key,
    ctx.services.idempotency.fingerprint([request.method, canonicalRoute(request), request.params, fingerprint]),
    run,
  );
  if (stored.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(stored.status).type('application/json; charset=utf-8').send(stored.body);
}
