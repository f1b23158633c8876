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
