import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from './bench-env';

/**
 * A Redis of the bench's own, as the tests start theirs: `redis-server` (or `valkey-server`)
 * from PATH on a free loopback port, without persistence, in a temporary directory. Never the
 * machine's own server. Undefined when no such program is installed (the caller says so and
 * skips what needs it).
 */
export async function startBenchRedis(): Promise<{ url: string; stop(): Promise<void> } | undefined> {
  const program = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((dir) => dir !== '')
    .flatMap((dir) => ['redis-server', 'valkey-server'].map((name) => path.join(dir, name)))
    .find((candidate) => {
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  if (!program) return undefined;
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-redis-'));
  const child = spawn(program, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'], {
    cwd: dir,
    stdio: 'ignore',
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') {
        probe.disconnect();
        return { url, stop };
      }
    } catch {
      // not up yet
    }
    probe.disconnect();
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`bench: redis-server did not start on port ${port}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
