import type { Config } from '../config';
import type { DataDirInUseError } from '../db/embedded';
import { parseFeeBearer, type CreateMerchantInput, type CreatedMerchant } from '../merchants/merchant.service';
import { readAdminToken } from '../operations/admin-token';
import { readServerRecord, type ServerRecord } from '../operations/server-record';
import { DomainError, type DomainErrorKind } from '../shared/errors';
import { ADMIN_COMMANDS_ROUTE, type OperatorCommand } from '../operations/operator-commands';

/** Why the CLI could not use the running server in place of the locked embedded database. */
export class ServerAdminUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServerAdminUnavailableError';
  }
}

const CREATE_MERCHANT = `mutation CliCreateMerchant($input: CreateMerchantInput!) {
  createMerchant(input: $input) {
    subsidiary { id name country supportEmail }
    webhookSecret
    liveWebhookSecret
    keys {
      test { publicKey privateKey encryptionKey }
      live { publicKey privateKey encryptionKey }
    }
    owner { email invitationUrl }
  }
}`;

/** The server that holds the embedded database, as it noted itself in DATA_DIR, with the admin token to call it. */
export function runningServer(config: Config, locked: DataDirInUseError): { server: ServerRecord; adminToken: string } {
  const server = readServerRecord(config.dataDir);
  if (!server || server.pid !== locked.pid) {
    throw new ServerAdminUnavailableError(`${locked.message} (It has not published an address in ${config.dataDir}: it may still be starting.)`);
  }
  const adminToken = config.adminToken ?? readAdminToken(config.dataDir);
  if (!adminToken) {
    throw new ServerAdminUnavailableError(
      `A server (process ${server.pid}) holds the embedded database in ${config.dataDir}; set ADMIN_TOKEN to its admin token to run commands through it.`,
    );
  }
  return { server, adminToken };
}

/**
 * merchant:create through the running server's admin GraphQL `createMerchant`: the same domain
 * service, and the same JSON, as when the CLI opens the database itself. The input goes as
 * given; the server's rules decide (a fee bearer is parsed here only to name the GraphQL enum).
 */
export async function createMerchantViaServer(target: { server: ServerRecord; adminToken: string }, input: CreateMerchantInput): Promise<CreatedMerchant> {
  const keyBits = input.keyBits;
  const variables = {
    input: {
      name: input.name,
      country: input.country,
      supportEmail: input.supportEmail,
      webhookUrl: input.webhookUrl ?? null,
      liveWebhookUrl: input.liveWebhookUrl ?? null,
      feeBearer: input.feeBearer === undefined || input.feeBearer === null ? null : parseFeeBearer(input.feeBearer).toUpperCase(),
      // Not a GraphQL Int (NaN, huge): a size the server refuses with its usual message.
      keyBits: keyBits === undefined || keyBits === null ? null : Number.isInteger(keyBits) && Math.abs(keyBits) < 2 ** 31 ? keyBits : -1,
      ownerEmail: input.ownerEmail ?? null,
    },
  };
  let response: Response;
  try {
    response = await fetch(`${target.server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-admin-token': target.adminToken },
      body: JSON.stringify({ query: CREATE_MERCHANT, variables }),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (err) {
    throw new ServerAdminUnavailableError(`could not reach the running server at ${target.server.url}: ${(err as Error).message}`);
  }
  const body = (await response.json().catch(() => null)) as {
    data?: { createMerchant?: CreatedMerchant | null } | null;
    errors?: { message: string; extensions?: { code?: string; kind?: string } }[];
  } | null;
  const error = body?.errors?.[0];
  if (error) {
    const kind = error.extensions?.kind;
    if (kind && kind !== 'unauthenticated' && kind !== 'forbidden')
      throw new DomainError(kind as DomainErrorKind, error.message, error.extensions?.code ?? 'VAL400');
    throw new ServerAdminUnavailableError(`the running server at ${target.server.url} refused: ${error.message}`);
  }
  const created = body?.data?.createMerchant;
  if (!created) throw new ServerAdminUnavailableError(`the running server at ${target.server.url} answered HTTP ${response.status} without a merchant`);
  // Exactly the shape (and key order) of the local path.
  const keys = (k: CreatedMerchant['keys']['test']) => ({ publicKey: k.publicKey, privateKey: k.privateKey, encryptionKey: k.encryptionKey });
  return {
    subsidiary: {
      id: created.subsidiary.id,
      name: created.subsidiary.name,
      country: created.subsidiary.country,
      supportEmail: created.subsidiary.supportEmail,
    },
    webhookSecret: created.webhookSecret,
    liveWebhookSecret: created.liveWebhookSecret,
    keys: { test: keys(created.keys.test), live: keys(created.keys.live) },
    ...(created.owner ? { owner: { email: created.owner.email, invitationUrl: created.owner.invitationUrl } } : {}),
  };
}

/**
 * An operator command (merchant:list, merchant:settings, merchant:reset-keys, migrate) carried
 * out by the running server: it runs the same code on its own services and answers the JSON the
 * CLI would have printed itself. A domain error comes back as the same DomainError.
 */
export async function runCommandViaServer(target: { server: ServerRecord; adminToken: string }, command: OperatorCommand): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(`${target.server.url}${ADMIN_COMMANDS_ROUTE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-admin-token': target.adminToken },
      body: JSON.stringify(command),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (err) {
    throw new ServerAdminUnavailableError(`could not reach the running server at ${target.server.url}: ${(err as Error).message}`);
  }
  const body = (await response.json().catch(() => null)) as {
    result?: Record<string, unknown>;
    error?: { kind: DomainErrorKind; code: string; message: string };
  } | null;
  if (body?.result && response.ok) return body.result;
  const error = body?.error;
  if (error && error.kind !== 'unauthenticated' && error.kind !== 'forbidden' && response.status !== 400)
    throw new DomainError(error.kind, error.message, error.code);
  throw new ServerAdminUnavailableError(`the running server at ${target.server.url} refused (HTTP ${response.status}): ${error?.message ?? 'no answer'}`);
}
