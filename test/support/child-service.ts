import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { TEST_MASTER_KEY } from './database';
import { freePort } from './scratch-database';
import { processMarker } from './test-processes';

const ROOT = path.resolve(__dirname, '../..');
/** Runs src/main.ts from its sources (SWC on load): the real `npm start` entry point, without a build. */
const RUNNER = path.join(ROOT, 'test/integration/payments/support/run-service.js');

export interface ChildService {
  baseUrl: string;
  child: ChildProcess;
  /** Everything the process wrote to stdout so far (its JSON log lines). */
  stdout(): string;
  stderr(): string;
  /** Parsed JSON log lines written so far. */
  logLines(): Array<Record<string, any>>;
  /** Resolves once the process exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM (or the given signal), then SIGKILL if still alive after `graceMs`. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<void>;
}

/**
 * The real service (src/main.ts) in a child process on the given database, listening on a
 * free loopback port; resolves once /health answers 200. Logs go to a pipe the test reads.
 */
export async function startChildService(databaseUrl: string, env: Record<string, string> = {}): Promise<ChildService> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [RUNNER], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      ...processMarker(),
      NODE_ENV: 'test',
      DATABASE_URL: databaseUrl,
      MIGRATE_ON_START: 'false',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: baseUrl,
      MASTER_KEY: TEST_MASTER_KEY,
      LOG_LEVEL: 'info',
      DATABASE_POOL_SIZE: '4',
      SCHEDULER_INTERVAL_MS: '0',
      DISPUTE_POLL_INTERVAL_MS: '0',
      WEBHOOK_CONCURRENCY: '0',
      ENCRYPTION_KEY_BITS: '2048',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const service: ChildService = {
    baseUrl,
    child,
    stdout: () => out,
    stderr: () => err,
    logLines: () =>
      out
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => {
          try {
            return JSON.parse(l);
          } catch {
            return { unparsed: l };
          }
        }),
    exited,
    async stop(signal = 'SIGTERM', graceMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([exited.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)))]);
      clearTimeout(timer);
      if (late) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
  const deadline = Date.now() + 60_000; // a cap: a busy machine has taken over 20 s to start one
  for (;;) {
    if (child.exitCode !== null) throw new Error(`service exited (${child.exitCode}): ${err}`);
    if (
      await fetch(`${baseUrl}/health`).then(
        (r) => r.ok,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`service did not start: ${err}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return service;
}
