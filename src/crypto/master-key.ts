import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { parseMasterKey } from './secret-box';

export interface MasterKeySource {
  key: Buffer;
  /** Set when no MASTER_KEY was given and a key file in DATA_DIR is used instead. */
  generatedFile?: string;
}

/**
 * MASTER_KEY seals secrets at rest. Without one, a key is generated once into DATA_DIR
 * (mode 0600) and reused; the caller warns, since anyone with the data directory then holds
 * both the sealed secrets and their key.
 */
export function loadMasterKey(masterKey: string | undefined, dataDir: string): MasterKeySource {
  if (masterKey) return { key: parseMasterKey(masterKey) };
  const file = path.join(dataDir, 'master.key');
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  try {
    fs.writeFileSync(file, randomBytes(32).toString('hex') + '\n', { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return { key: parseMasterKey(fs.readFileSync(file, 'utf8').trim()), generatedFile: file };
}

/** What the check value holds, sealed under the master key. */
export const CHECK_PLAINTEXT = 'checkout-gateway master key check v1';
export const CHECK_CONTEXT = 'master-key-check';

/** Thrown at start when MASTER_KEY is not the key the database's secrets were sealed with. */
export class MasterKeyMismatchError extends Error {
  constructor(reason: string) {
    super(
      `MASTER_KEY does not match this database: ${reason}. ` +
        'Secrets stored here (RSA private keys, webhook secrets) cannot be opened with it, so the service refuses to start. ' +
        'Start it with the MASTER_KEY the database was first used with (or, when MASTER_KEY is unset, with the same DATA_DIR/master.key).',
    );
    this.name = 'MasterKeyMismatchError';
  }
}

/** The few database operations the check needs (a MikroORM connection fits). */
export interface MasterKeyCheckStore {
  execute(sql: string, params?: unknown[]): Promise<any>;
}

/**
 * Verifies the master key against the database at start. The first start stores a check value
 * (a known text sealed under the key); every later start must open it, or it refuses to start
 * with MasterKeyMismatchError, rather than run and fail on every secret it opens. On a database
 * that already holds sealed secrets but no check value yet (written before the check existed),
 * `openExistingSecret` must succeed first, so a wrong key is never recorded as the right one.
 * Does nothing when the table is missing (migrations not applied).
 */
export async function verifyMasterKey(
  store: MasterKeyCheckStore,
  box: { seal(plaintext: string, context: string): string; open(sealed: string, context: string): string },
  openExistingSecret: () => Promise<'opened' | 'failed' | 'none'>,
): Promise<'stored' | 'matched' | 'skipped'> {
  const [table] = await store.execute(`select to_regclass('master_key_check') is not null as present`);
  if (!table?.present) return 'skipped';
  const read = async (): Promise<string | null> => (await store.execute('select check_value from master_key_check where id = 1'))[0]?.check_value ?? null;
  let stored = await read();
  let outcome: 'stored' | 'matched' = 'matched';
  if (stored === null) {
    if ((await openExistingSecret()) === 'failed') throw new MasterKeyMismatchError('a secret already stored in the database does not open with it');
    await store.execute('insert into master_key_check (id, check_value) values (1, ?) on conflict (id) do nothing', [box.seal(CHECK_PLAINTEXT, CHECK_CONTEXT)]);
    // Another instance starting at the same moment may have written first: compare with what is there.
    stored = await read();
    outcome = 'stored';
  }
  let plaintext: string | null = null;
  try {
    plaintext = box.open(stored ?? '', CHECK_CONTEXT);
  } catch {
    plaintext = null;
  }
  if (plaintext !== CHECK_PLAINTEXT) throw new MasterKeyMismatchError('the check value stored at its first start does not open with it');
  return outcome;
}
