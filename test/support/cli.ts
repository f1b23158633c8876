import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/main';
import { TEST_DATABASE_URL, TEST_MASTER_KEY } from './database';

/** Runs the CLI in this process, as `npm run cli -- …` would, and captures its exit code and output. */
export async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out = new PassThrough();
  const err = new PassThrough();
  const chunks = { out: [] as Buffer[], err: [] as Buffer[] };
  out.on('data', (c) => chunks.out.push(c));
  err.on('data', (c) => chunks.err.push(c));
  const code = await runCli(args, out, err);
  return { code, out: Buffer.concat(chunks.out).toString(), err: Buffer.concat(chunks.err).toString() };
}

/**
 * The CLI reads its configuration from process.env: this points it at the test database, in a
 * DATA_DIR of its own, between `apply()` and `restore()` (a describe block's beforeAll/afterAll).
 */
export function cliEnvironment(name: string): { apply(): void; restore(): void } {
  const saved = { ...process.env };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `pgw-${name}-`));
  return {
    apply: () => {
      Object.assign(process.env, {
        DATABASE_URL: TEST_DATABASE_URL,
        MASTER_KEY: TEST_MASTER_KEY,
        MIGRATE_ON_START: 'false',
        DATA_DIR: dataDir,
        LOG_LEVEL: 'silent',
      });
    },
    restore: () => {
      process.env = saved;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
