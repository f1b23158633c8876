import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { redisServerProgram } from '../../bench/redis-program';

/**
 * A Redis of the test's own: the `redis-server` program (or `valkey-server`) found on PATH,
 * started on a free loopback port in a temporary directory, without persistence, and stopped
 * by the test. Never the machine's own server on 6379: CI runs in namespaces that hide system
 * services, and a developer's data is not the tests' to touch.
 *
 * Where no such program is installed, the tests that need one are skipped with a line saying so
 * (`describeWithRedis`), so `npm test` still passes on a bare machine.
 */
export const REDIS_SERVER_MISSING = 'redis-server not found: skipping tests that need Redis';

export interface RedisServer {
  /** `redis://127.0.0.1:<port>`, for REDIS_URL. */
  url: string;
  /** Stops the server (its clients see the connection close) and deletes its directory. Safe to call twice. */
  stop(): Promise<void>;
}

/** `describe` when a Redis server program is installed, else `describe.skip` and one line telling why. */
export function describeWithRedis(name: string, body: () => void): void {
  if (redisServerProgram() !== undefined) {
    describe(name, body);
    return;
  }
  console.log(`${REDIS_SERVER_MISSING} (${name})`);
  describe.skip(name, body);
}

/** Starts a server of the test's own and resolves once it answers PING. */
export async function startRedisServer(): Promise<RedisServer> {
  const program = redisServerProgram();
  if (program === undefined) throw new Error(REDIS_SERVER_MISSING);
  // A port found free can be taken before the server binds it: then another port.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(program, await freeLoopbackPort());
    } catch (error) {
      if (attempt >= 3 || !/address already in use|could not create server/i.test(String(error))) throw error;
    }
  }
}

async function startOn(program: string, port: number): Promise<RedisServer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-redis-'));
  // The default environment: the child inherits the run's marker, so a server left behind is found.
  const child = spawn(
    program,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--loglevel', 'warning'],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  const collect = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const onExit = () => {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      process.removeListener('exit', onExit);
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    })());

  const deadline = Date.now() + 10_000;
  while (!(await answersPing(port))) {
    if (!running() || Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not start on port ${port}: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `redis://127.0.0.1:${port}`, stop };
}

/** True when a server on `port` answers PING with PONG. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
