import { parseArgs } from 'node:util';
import type { OperatorCommand } from '../operations/operator-commands';
import type { RotatableKey } from '../merchants/merchant.service';

/** A command line read: the command to run and how to print its answer; or the usage error to show. */
export type ParsedOperatorCommand = { request: OperatorCommand; json: boolean } | { usage: string };

const ID = /^[0-9]{1,9}$/;
const KINDS: readonly RotatableKey[] = ['public', 'private', 'encryption'];

/** Reads the arguments of merchant:list, merchant:settings, merchant:reset-keys and migrate. */
export function parseOperatorCommand(command: string, args: string[]): ParsedOperatorCommand {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        id: { type: 'string' },
        environment: { type: 'string' },
        'fee-bearer': { type: 'string' },
        keys: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
    }));
  } catch (e) {
    return { usage: (e as Error).message };
  }
  const json = values.json === true;
  const id = typeof values.id === 'string' ? values.id : '';
  const environment = values.environment;
  const allowed = (names: string[]) => Object.keys(values).every((k) => k === 'json' || names.includes(k));
  switch (command) {
    case 'merchant:list':
    case 'migrate':
      if (!allowed([])) return { usage: `${command} takes no options${command === 'migrate' ? '' : ' but --json'}` };
      return { request: { command }, json };
    case 'merchant:settings':
      if (!allowed(['id', 'environment', 'fee-bearer']) || !ID.test(id) || (environment !== undefined && environment !== 'test' && environment !== 'live')) {
        return { usage: 'merchant:settings needs --id <merchant id> and optionally --environment test|live' };
      }
      return {
        request: {
          command,
          id: Number(id),
          environments: environment ? [environment] : ['test', 'live'],
          feeBearer: values['fee-bearer'] as string | undefined,
        },
        json,
      };
    case 'merchant:reset-keys': {
      const keys = (typeof values.keys === 'string' ? values.keys : 'public,private').split(',').map((k) => k.trim());
      if (
        !allowed(['id', 'environment', 'keys']) ||
        !ID.test(id) ||
        (environment !== 'test' && environment !== 'live') ||
        !keys.every((k) => (KINDS as string[]).includes(k))
      ) {
        return { usage: 'merchant:reset-keys needs --id <merchant id> --environment test|live and optionally --keys public,private,encryption' };
      }
      return { request: { command, id: Number(id), environment, keys: [...new Set(keys)] as RotatableKey[] }, json };
    }
    default:
      return { usage: `unknown command ${command}` };
  }
}

/** The fields of the commands' answers that the text output shows. */
interface PrintedAnswer {
  merchants?: { id: number; name: string; country: string; supportEmail: string; createdAt: string }[];
  subsidiaryId?: number;
  test?: { feeBearer: string };
  live?: { feeBearer: string };
  previousKeysExpireAt?: string;
  publicKey?: string;
  privateKey?: string;
  encryptionKey?: string;
}

/** What the command prints, from its JSON answer (the same whether the CLI or the running server ran it). */
export function printOperatorResult(
  request: OperatorCommand,
  answer: Record<string, unknown>,
  json: boolean,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): void {
  const result = answer as PrintedAnswer;
  if (request.command === 'migrate') {
    err.write('migrations applied\n');
    return;
  }
  if (json) {
    out.write(`${JSON.stringify(result, null, 2)}\n`);
    return;
  }
  if (request.command === 'merchant:list') {
    const merchants = result.merchants ?? [];
    if (merchants.length === 0) out.write('No merchants yet.\n');
    for (const m of merchants) out.write(`${m.id}\t${m.name}\t${m.country}\t${m.supportEmail}\tcreated ${m.createdAt}\n`);
  } else if (request.command === 'merchant:settings') {
    out.write(`Merchant ${result.subsidiaryId}: test fee bearer ${result.test?.feeBearer}, live fee bearer ${result.live?.feeBearer}.\n`);
  } else {
    const mode = request.environment === 'live' ? 'Live' : 'Test';
    const lines = [
      `Reset the ${request.environment} keys of merchant ${result.subsidiaryId}; the replaced keys stopped working at ${result.previousKeysExpireAt}.`,
    ];
    if (result.publicKey) lines.push(`${mode} public key:  ${result.publicKey}`);
    if (result.privateKey) lines.push(`${mode} private key: ${result.privateKey}`);
    if (result.encryptionKey) lines.push(`${mode} encryption key: ${result.encryptionKey}`);
    lines.push('The new keys are shown once: store them now.', '');
    out.write(lines.join('\n'));
  }
}
