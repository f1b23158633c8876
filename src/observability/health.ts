import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context';
import { within } from '../shared/time';

/** A readiness check never takes longer than this: a database that does not answer in time is down. */
export const READINESS_TIMEOUT_MS = 2_000;

/** True when the database answers a trivial query within READINESS_TIMEOUT_MS. */
export async function databaseReachable(ctx: AppContext): Promise<boolean> {
  try {
    await within(ctx.orm.em.getConnection().execute('select 1'), READINESS_TIMEOUT_MS, 'the readiness query');
    return true;
  } catch {
    return false;
  }
}

/**
 * Health endpoints:
 * - `GET /health` and `GET /health/ready`: 200 `{"status":"ok"}` when the database answers,
 *   503 `{"status":"unavailable"}` while it does not (a load balancer stops sending traffic);
 * - `GET /health/live`: 200 `{"status":"ok"}` whenever the process serves requests at all
 *   (a supervisor restarts the process only when this fails, never because the database is down).
 */
export function registerHealth(app: FastifyInstance, ctx: AppContext): void {
  const ready = async (_request: unknown, reply: import('fastify').FastifyReply) => {
    if (await databaseReachable(ctx)) return { status: 'ok' };
    return reply.code(503).send({ status: 'unavailable' });
  };
  const QUIET = { config: { quietLog: true } };
  app.get('/health', QUIET, ready);
  app.get('/health/ready', QUIET, ready);
  app.get('/health/live', QUIET, async () => ({ status: 'ok' }));
}
