import type { FastifyInstance } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { MerchantService } from '../merchants/merchant.service';
import { DomainError } from '../shared/errors';
import { adminTokenMatches } from './admin-token';
import { ADMIN_COMMANDS_ROUTE, readOperatorCommand, runOperatorCommand } from './operator-commands';

const STATUS_OF_KIND: Record<string, number> = { not_found: 404, conflict: 409, forbidden: 403, unauthenticated: 401 };

/**
 * `POST /admin/commands` (x-admin-token): runs one operator command (merchant:list,
 * merchant:settings, merchant:reset-keys, migrate) with the server's own services and answers
 * `{ result }`, the JSON the CLI prints, or `{ error: { kind, code, message } }`.
 */
export function registerAdminApi(
  app: FastifyInstance,
  ctx: { config: { adminToken?: string }; orm: MikroORM; services: { merchants: MerchantService } },
): void {
  app.post(ADMIN_COMMANDS_ROUTE, async (request, reply) => {
    const token = request.headers['x-admin-token'];
    if (!adminTokenMatches(ctx.config.adminToken, typeof token === 'string' ? token : undefined)) {
      return reply.code(401).send({ error: { kind: 'unauthenticated', code: '401', message: 'A valid x-admin-token header is required.' } });
    }
    const command = readOperatorCommand(request.body);
    if (!command) return reply.code(400).send({ error: { kind: 'validation', code: 'VAL400', message: 'Unknown or malformed operator command.' } });
    try {
      return { result: await runOperatorCommand({ orm: ctx.orm, merchants: ctx.services.merchants }, command) };
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return reply.code(STATUS_OF_KIND[err.kind] ?? 400).send({ error: { kind: err.kind, code: err.code, message: err.message } });
    }
  });
}
