import type { MikroORM } from '@mikro-orm/postgresql';
import type { EnvironmentMode } from '../merchants/app-environment.entity';
import type { MerchantService, RotatableKey } from '../merchants/merchant.service';

/**
 * What an operator asks of the service from the command line, once parsed. The CLI carries a
 * command out itself when it can open the database, or sends it to the running server (which
 * holds the embedded database) through its admin API: both call `runOperatorCommand`, so the
 * answer is the same JSON either way.
 */
export type OperatorCommand =
  | { command: 'merchant:list' }
  | { command: 'merchant:settings'; id: number; environments: EnvironmentMode[]; feeBearer?: string }
  | { command: 'merchant:reset-keys'; id: number; environment: EnvironmentMode; keys: RotatableKey[] }
  | { command: 'migrate' };

/** Where the CLI sends an operator command when a running server holds the embedded database. */
export const ADMIN_COMMANDS_ROUTE = '/admin/commands';

export const OPERATOR_COMMANDS: readonly OperatorCommand['command'][] = ['merchant:list', 'merchant:settings', 'merchant:reset-keys', 'migrate'];

/** Runs one command on the open database; the answer is plain JSON (dates as ISO text). */
export async function runOperatorCommand(target: { orm: MikroORM; merchants: MerchantService }, request: OperatorCommand): Promise<Record<string, unknown>> {
  const { merchants } = target;
  switch (request.command) {
    case 'merchant:list':
      return json({ merchants: await merchants.listMerchants() });
    case 'merchant:settings':
      return json(await merchants.updateSettings(request.id, { feeBearer: request.feeBearer }, request.environments));
    case 'merchant:reset-keys': {
      const rotated = await merchants.resetKeys(request.id, request.environment, request.keys);
      return json({ subsidiaryId: request.id, environment: request.environment, ...rotated });
    }
    case 'migrate': {
      const applied = await target.orm.getMigrator().up();
      return { applied: applied.map((m) => m.name) };
    }
  }
}

/** Reads a command sent to the admin API: an unknown or malformed one is refused (undefined). */
export function readOperatorCommand(body: unknown): OperatorCommand | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  const id = typeof b.id === 'number' && Number.isInteger(b.id) && b.id > 0 ? b.id : undefined;
  const mode = (v: unknown): v is EnvironmentMode => v === 'test' || v === 'live';
  switch (b.command) {
    case 'merchant:list':
    case 'migrate':
      return { command: b.command };
    case 'merchant:settings':
      if (id === undefined || !Array.isArray(b.environments) || !b.environments.every(mode)) return undefined;
      if (b.feeBearer !== undefined && typeof b.feeBearer !== 'string') return undefined;
      return { command: b.command, id, environments: b.environments, feeBearer: b.feeBearer };
    case 'merchant:reset-keys': {
      const kinds = ['public', 'private', 'encryption'];
      if (id === undefined || !mode(b.environment) || !Array.isArray(b.keys) || !b.keys.every((k) => kinds.includes(k as string))) return undefined;
      return { command: b.command, id, environment: b.environment, keys: b.keys as RotatableKey[] };
    }
    default:
      return undefined;
  }
}

function json(value: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}
