import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from 'pg';
import { EmbeddedSocketPathError, startEmbeddedDatabase, type EmbeddedDatabase } from '../../src/db/embedded';
import { processMarker } from '../support/test-processes';

const ROOT = path.resolve(__dirname, '../..');
/** src/main.ts from its sources, as `npm start` runs it. */
const RUNNER = path.join(ROOT, 'test/integration/payments/support/run-service.js');

/** A directory whose socket path (`<dir>/.s.PGSQL.5432`) is longer than a Unix socket path may be. */
function longDirectory(parent: string): string {
  const dir = path.join(parent, 'a-data-directory-with-a-long-name'.repeat(3));
  fs.mkdirSync(dir, { recursive: true });
  expect(path.join(dir, '.s.PGSQL.5432').length).toBeGreaterThan(108);
  return dir;
}

/** Every TCP port this process listens on (Linux /proc), to prove nothing was opened there. */
function listeningTcpInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!fs.existsSync(file)) continue;
    for (const line of fs.readFileSync(file, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[3] === '0A') inodes.add(cols[9]!); // LISTEN
    }
  }
  const mine = new Set<string>();
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    const link = (() => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    })();
    const inode = /^socket:\[(\d+)\]$/.exec(link)?.[1];
    if (inode && inodes.has(inode)) mine.add(inode);
  }
  return mine;
}

describe('the embedded database socket with a long DATA_DIR', () => {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-socket-'));
  const children: ChildProcess[] = [];
  afterAll(async () => {
    // A service that did start (the failure this file guards against) is stopped, whatever the outcome.
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it('serves on a private Unix socket under the temporary directory, never on TCP', async () => {
    const dataDir = longDirectory(scratch);
    const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-t-'));
    const listeningBefore = listeningTcpInodes();
    let db: EmbeddedDatabase | undefined;
    try {
      db = await startEmbeddedDatabase(dataDir, { tempDir });
      expect(listeningTcpInodes()).toEqual(listeningBefore);
      const { host, port } = db.target;
      expect(path.dirname(host)).toBe(tempDir);
      expect(path.basename(host)).toMatch(/^pgw-db-/);
      expect(fs.statSync(host).mode & 0o777).toBe(0o700);
      const socket = path.join(host, `.s.PGSQL.${port}`);
      expect(fs.statSync(socket).isSocket()).toBe(true);
      expect(fs.statSync(socket).mode & 0o777).toBe(0o600);

      const client = new Client({ host, port, user: 'postgres', database: 'postgres' });
      await client.connect();
      try {
        expect((await client.query('select 1 + 1 as two')).rows).toEqual([{ two: 2 }]);
      } finally {
        await client.end();
      }
    } finally {
      await db?.close();
    }
    // Closing removes the socket's directory.
    expect(fs.readdirSync(tempDir)).toEqual([]);
    fs.rmSync(tempDir, { recursive: true, force: true });
  });

  it('refuses to start with a clear error when the temporary directory is too long too', async () => {
    const dataDir = longDirectory(path.join(scratch, 'refused'));
    const tempDir = longDirectory(path.join(scratch, 'tmp'));
    const error = await startEmbeddedDatabase(dataDir, { tempDir }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbeddedSocketPathError);
    expect((error as Error).message).toMatch(/longer than the 100 bytes a Unix socket path may have.*Use a shorter DATA_DIR, set TMPDIR/s);
    // Nothing left behind, and the data directory is not locked.
    expect(fs.readdirSync(tempDir)).toEqual([]);
    expect(fs.existsSync(path.join(dataDir, 'embedded.lock'))).toBe(false);
    // A temporary directory that cannot hold a private directory: refused the same way.
    const missing = await startEmbeddedDatabase(dataDir, { tempDir: path.join(scratch, 'no-such-directory') }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(EmbeddedSocketPathError);
    expect((missing as Error).message).toContain(`no private directory could be made under ${path.join(scratch, 'no-such-directory')}`);
    // Starting an embedded PostgreSQL is slow on a loaded machine: a deadline, not a measurement.
  }, 120_000);

  it('makes `npm start` exit 78 with that message instead of serving the database on TCP', async () => {
    const dataDir = longDirectory(path.join(scratch, 'main'));
    const tempDir = longDirectory(path.join(scratch, 'main-tmp'));
    const child = spawn(process.execPath, [RUNNER], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        ...processMarker(),
        NODE_ENV: 'test',
        DATA_DIR: dataDir,
        TMPDIR: tempDir,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout!.resume();
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(stderr).toMatch(
      /The embedded database cannot open its socket: .* is longer than the 100 bytes a Unix socket path may have, and the temporary directory .* is too long as well/,
    );
    expect(code).toBe(78);
  }, 60_000);
});
