import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/main';

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
