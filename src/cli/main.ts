import 'reflect-metadata';
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type Config } from '../config';
import { openRuntime, type Runtime } from '../bootstrap';
import { DomainError } from '../shared/errors';
import { DataDirInUseError, EmbeddedSocketPathError } from '../db/embedded';
import { loadMasterKey, MasterKeyMismatchError } from '../crypto/master-key';
import { rotateMasterKey } from '../merchants/master-key-rotation';
import { smallKeyWarning } from '../crypto/encryption-key';
import { parseMasterKey } from '../crypto/secret-box';
import type { CreatedMerchant } from '../merchants/merchant.service';
import { createMerchantViaServer, runCommandViaServer, runningServer, ServerAdminUnavailableError } from './server-admin';
import { OPERATOR_COMMANDS, runOperatorCommand, type OperatorCommand } from '../operations/operator-commands';
import { parseOperatorCommand, printOperatorResult } from './operator-cli';

const USAGE = `Usage:
  npm run --silent cli -- --help | -h | help
  npm run --silent cli -- merchant:create --name NAME --country CC --email EMAIL
                          [--webhook-url URL] [--live-webhook-url URL] [--json]
                          [--key-bits 2048|3072|4096]   (default 4096; 2048 and 3072 break
                           real legacy clients, which encrypt one block: a warning is printed)
                          [--fee-bearer customer|merchant]   (default customer)
                          [--owner-email EMAIL]   (invites the first owner: prints the invitation URL)
  npm run --silent cli -- merchant:settings --id MERCHANT_ID [--environment test|live]
                          [--fee-bearer merchant|customer] [--json]
  npm run --silent cli -- merchant:list [--json]
  npm run --silent cli -- merchant:reset-keys --id MERCHANT_ID --environment test|live
                          [--keys public,private,encryption]   (default public,private; the
                           old keys stop at once, the new ones are shown once) [--json]
  npm run --silent cli -- migrate
  (While a server holds the embedded database, these and merchant:create go through it.)
  NEW_MASTER_KEY=… npm run --silent cli -- master-key:rotate [--json]
  npm run --silent cli -- master-key:rotate --generate [--json]
`;

/** The command line: an adapter over the same domain services as the HTTP interfaces. */
export async function runCli(argv: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  const [command, ...rest] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    out.write(USAGE);
    return 0;
  }
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      err.write(`${e.message}\n`);
      return 78;
    }
    throw e;
  }

  if (OPERATOR_COMMANDS.includes(command as OperatorCommand['command'])) return operatorCommand(config, command!, rest, out, err);
  if (command === 'master-key:rotate') return masterKeyRotate(config, rest, out, err);

  if (command !== 'merchant:create') {
    err.write(USAGE);
    return 64; // EX_USAGE
  }

  let values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        country: { type: 'string' },
        email: { type: 'string' },
        'webhook-url': { type: 'string' },
        'live-webhook-url': { type: 'string' },
        'fee-bearer': { type: 'string' },
        json: { type: 'boolean', default: false },
        'key-bits': { type: 'string' },
        'owner-email': { type: 'string' },
      },
      strict: true,
    }));
  } catch (e) {
    err.write(`${(e as Error).message}\n${USAGE}`);
    return 64;
  }

  const input = {
    name: values.name ?? '',
    country: values.country ?? '',
    supportEmail: values.email ?? '',
    webhookUrl: values['webhook-url'],
    liveWebhookUrl: values['live-webhook-url'],
    feeBearer: values['fee-bearer'],
    ownerEmail: values['owner-email'],
    // Not a whole number: NaN, which the service refuses like any other unsupported size.
    keyBits: values['key-bits'] === undefined ? undefined : /^\d+$/.test(values['key-bits']) ? Number(values['key-bits']) : Number.NaN,
  };
  const print = (created: CreatedMerchant) => {
    // On stderr: stdout keeps exactly the one JSON object of --json.
    const warning = input.keyBits === undefined ? null : smallKeyWarning(input.keyBits);
    if (warning) err.write(`warning: --key-bits ${input.keyBits}: ${warning}\n`);
    if (values.json) {
      out.write(`${JSON.stringify(created, null, 2)}\n`);
    } else {
      out.write(
        [
          `Created merchant ${created.subsidiary.id} (${created.subsidiary.name}).`,
          `Test webhook secret: ${created.webhookSecret}`,
          `Live webhook secret: ${created.liveWebhookSecret}`,
          `Test public key:  ${created.keys.test.publicKey}`,
          `Test private key: ${created.keys.test.privateKey}`,
          `Live public key:  ${created.keys.live.publicKey}`,
          `Live private key: ${created.keys.live.privateKey}`,
          ...(created.owner ? [`Owner invitation for ${created.owner.email} (valid 72 hours, once): ${created.owner.invitationUrl}`] : []),
          'Private keys are shown once: store them now. Use --json for the encryption keys.',
          '',
        ].join('\n'),
      );
    }
    return 0;
  };

  try {
    return await withRuntime(config, err, async (runtime) => {
      if (runtime.generatedMasterKeyFile) {
        err.write(`warning: MASTER_KEY is not set; using the key generated in ${runtime.generatedMasterKeyFile}\n`);
      }
      return print(await runtime.ctx.services.merchants.createMerchant(input));
    });
  } catch (e) {
    // A server holds the embedded database: create the merchant through its admin API instead.
    if (!(e instanceof DataDirInUseError)) throw e;
    return viaServer(runningServer(config, e), err, async (target) => print(await createMerchantViaServer(target, input)));
  }
}

/** Like withRuntime, for a command carried out by the running server: domain errors exit 65, an unreachable server 1. */
async function viaServer<T>(target: T, err: NodeJS.WritableStream, command: (target: T) => Promise<number>): Promise<number> {
  try {
    return await command(target);
  } catch (e) {
    if (e instanceof DomainError) {
      err.write(`error: ${e.message}\n`);
      return 65; // EX_DATAERR
    }
    throw e;
  }
}

/** Runs a command against the database: a domain error (bad input) exits 65 with its message; the runtime is always closed. */
async function withRuntime(config: Config, err: NodeJS.WritableStream, command: (runtime: Runtime) => Promise<number>): Promise<number> {
  const runtime = await openRuntime(config);
  try {
    return await command(runtime);
  } catch (e) {
    if (e instanceof DomainError) {
      err.write(`error: ${e.message}\n`);
      return 65; // EX_DATAERR
    }
    throw e;
  } finally {
    await runtime.close();
  }
}

/**
 * merchant:list, merchant:settings, merchant:reset-keys and migrate: on the database when the CLI
 * can open it, else (a server holds the embedded database) through that server's admin API,
 * which runs the same code: the same output either way.
 */
/** Printed when the running instances could not be told of replaced keys (the command itself succeeded). */
export const KEYS_UNANNOUNCED =
  'warning: the running instances could not be told that the keys were replaced (PostgreSQL NOTIFY or Redis failed): the old keys no longer work, ' +
  'but GraphQL WebSockets opened with them stay open until they reconnect or an instance restarts';

async function operatorCommand(config: Config, command: string, args: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  const parsed = parseOperatorCommand(command, args);
  if ('usage' in parsed) {
    err.write(`${parsed.usage}\n${USAGE}`);
    return 64;
  }
  const { request, json } = parsed;
  let runtime: Runtime;
  try {
    runtime = await openRuntime(config, { migrate: request.command === 'migrate' });
  } catch (e) {
    if (!(e instanceof DataDirInUseError)) throw e;
    const target = runningServer(config, e);
    return viaServer(target, err, async () => {
      printOperatorResult(request, await runCommandViaServer(target, request), json, out, err);
      if (request.command === 'migrate') err.write(`(by the running server, process ${target.server.pid}, which migrates when it starts)\n`);
      return 0;
    });
  }
  try {
    printOperatorResult(request, await runOperatorCommand({ orm: runtime.ctx.orm, merchants: runtime.ctx.services.merchants }, request), json, out, err);
    // Replaced keys are announced to the running instances (they close the sockets opened with them).
    if ((await runtime.ctx.services.keyAnnouncements.settled()) > 0) err.write(`${KEYS_UNANNOUNCED}\n`);
    return 0;
  } catch (e) {
    if (e instanceof DomainError) {
      err.write(`error: ${e.message}\n`);
      return 65; // EX_DATAERR
    }
    throw e;
  } finally {
    await runtime.close();
  }
}

/**
 * `master-key:rotate`: re-seals every stored secret under a new master key in one transaction
 * (docs/operations.md). The new key comes from NEW_MASTER_KEY (never a command-line argument,
 * which other users could read), or `--generate` makes one and prints it once. With MASTER_KEY
 * unset, the key file in DATA_DIR is replaced after the commit.
 */
async function masterKeyRotate(config: Config, args: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args, options: { generate: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } }, strict: true }));
  } catch (e) {
    err.write(`${(e as Error).message}\n${USAGE}`);
    return 64;
  }
  const given = process.env.NEW_MASTER_KEY?.trim();
  if (given && values.generate) {
    err.write('master-key:rotate takes NEW_MASTER_KEY or --generate, not both\n');
    return 64;
  }
  let newKey: Buffer;
  if (given) {
    try {
      newKey = parseMasterKey(given);
    } catch (e) {
      err.write(`NEW_MASTER_KEY: ${(e as Error).message}\n`);
      return 64;
    }
  } else if (values.generate) {
    newKey = randomBytes(32);
  } else {
    err.write(`master-key:rotate needs the new key in NEW_MASTER_KEY, or --generate\n${USAGE}`);
    return 64;
  }
  const current = loadMasterKey(config.masterKey, config.dataDir);
  if (current.key.equals(newKey)) {
    err.write('NEW_MASTER_KEY is the current master key: nothing to do\n');
    return 64;
  }
  const runtime = await openRuntime(config); // refuses a MASTER_KEY that does not match the database
  let result;
  try {
    result = await rotateMasterKey(runtime.ctx.orm, current.key, newKey);
  } finally {
    await runtime.close();
  }
  const newKeyHex = newKey.toString('hex');
  if (current.generatedFile) {
    // The database now needs the new key: replace the key file atomically.
    const temporary = `${current.generatedFile}.${process.pid}.tmp`;
    fs.writeFileSync(temporary, `${newKeyHex}\n`, { mode: 0o600 });
    fs.renameSync(temporary, current.generatedFile);
  }
  const report = {
    resealed: result.resealed,
    keyFile: current.generatedFile ?? null,
    // Printed only when this command made the key and no file keeps it: the one chance to store it.
    newMasterKey: values.generate && !current.generatedFile ? newKeyHex : undefined,
  };
  if (values.json) {
    out.write(`${JSON.stringify(report, null, 2)}\n`);
  } else {
    const counts = Object.entries(result.resealed)
      .map(([column, n]) => `${n} ${column}`)
      .join(', ');
    out.write(`Re-sealed ${counts} and the check value under the new master key.\n`);
    if (current.generatedFile) out.write(`The new key is in ${current.generatedFile}.\n`);
    else
      out.write(
        `${report.newMasterKey ? `New MASTER_KEY: ${report.newMasterKey}\n` : ''}Start every instance with MASTER_KEY set to the new key: the old one no longer opens this database.\n`,
      );
  }
  return 0;
}

if (require.main === module) {
  runCli(process.argv.slice(2), process.stdout, process.stderr)
    .then((code) => process.exit(code))
    .catch((e) => {
      if (e instanceof EmbeddedSocketPathError) {
        process.stderr.write(`${e.message}\n`);
        process.exit(78); // EX_CONFIG, as the server
      }
      process.stderr.write(
        e instanceof DataDirInUseError || e instanceof MasterKeyMismatchError || e instanceof ServerAdminUnavailableError
          ? `${e.message}\n`
          : `${e instanceof Error ? e.stack : String(e)}\n`,
      );
      process.exit(1);
    });
}
