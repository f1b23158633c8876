import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { spawn } from 'node:child_process';
import { freePort } from './bench-env';

/** A Redis of the bench's own (as the tests start theirs): stopped by `stop`, its directory deleted. */
export interface BenchRedis {
  url: string;
  stop(): Promise<void>;
}

/** Where neither program is on PATH (undefined), the variants that need a Redis are skipped. */
export { redisServerProgram } from './redis-program';

/** Answers once the server at `port` replies to PING (inline command), or throws after `timeoutMs`. */
async function awaitPong(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pong = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.setTimeout(500);
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (data) => {
        socket.destroy();
        resolve(data.toString().startsWith('+PONG'));
      });
      socket.once('error', () => resolve(false));
      socket.once('timeout', () => {
        socket.destroy();
        resolve(false);
      });
    });
    if (pong) return;
    if (Date.now() > deadline) throw new Error(`bench: redis-server on port ${port} did not answer PING`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Starts `program` on a free loopback port, without persistence, in a temporary directory. */
export async function startBenchRedis(program: string): Promise<BenchRedis> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-redis-'));
  const child = spawn(program, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--loglevel', 'warning'], {
    cwd: dir,
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    await awaitPong(port, 10_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `redis://127.0.0.1:${port}`, stop };
}
