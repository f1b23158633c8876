import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Where the pg driver reaches the embedded database. */
export interface EmbeddedTarget {
  host: string;
  port: number;
}

export interface EmbeddedDatabase {
  target: EmbeddedTarget;
  close(): Promise<void>;
}

export class DataDirInUseError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`The embedded database in ${dataDir} is in use by process ${pid}. ` + 'Stop that process, or set DATABASE_URL to use a PostgreSQL server.');
    this.name = 'DataDirInUseError';
  }
}

/**
 * Thrown at start when the embedded database's Unix socket can be placed neither in DATA_DIR
 * (its path too long for the OS) nor in a private directory under the temporary directory.
 * The service refuses to start (exit 78) rather than serve the database on TCP, where PGlite
 * asks for no password.
 */
export class EmbeddedSocketPathError extends Error {
  constructor(
    readonly dataDir: string,
    reason: string,
  ) {
    super(
      `The embedded database cannot open its socket: ${path.join(dataDir, SOCKET_NAME)} is longer than the ${MAX_SOCKET_PATH} bytes ` +
        `a Unix socket path may have, and ${reason}. Use a shorter DATA_DIR, set TMPDIR to a short writable directory, ` +
        'or set DATABASE_URL to use a PostgreSQL server.',
    );
    this.name = 'EmbeddedSocketPathError';
  }
}

const SOCKET_PORT = 5432;
const SOCKET_NAME = `.s.PGSQL.${SOCKET_PORT}`;
/** sun_path is 108 bytes on Linux (104 on macOS); with a margin. */
const MAX_SOCKET_PATH = 100;

/** Where the socket goes: DATA_DIR when its path fits, else a new private (0700) directory under `tempDir`. */
function socketDirectory(dataDir: string, tempDir: string): { dir: string; remove(): void } {
  if (Buffer.byteLength(path.join(dataDir, SOCKET_NAME)) <= MAX_SOCKET_PATH) return { dir: dataDir, remove: () => {} };
  let dir: string;
  try {
    dir = fs.mkdtempSync(path.join(tempDir, 'pgw-db-'));
    fs.chmodSync(dir, 0o700);
  } catch (err) {
    throw new EmbeddedSocketPathError(dataDir, `no private directory could be made under ${tempDir} (${(err as Error).message})`);
  }
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  if (Buffer.byteLength(path.join(dir, SOCKET_NAME)) > MAX_SOCKET_PATH) {
    remove();
    throw new EmbeddedSocketPathError(dataDir, `the temporary directory ${tempDir} is too long as well`);
  }
  return { dir, remove };
}

/**
 * Starts PGlite (PostgreSQL compiled to WebAssembly) on DATA_DIR and serves it on a Unix
 * socket (owner only, 0600), so the ordinary PostgreSQL driver, SQL and migrations are used in
 * both database modes. PGlite is single-connection: the pool must hold one connection.
 * A lock file keeps a second process (a CLI, another server) off the same files.
 *
 * The socket sits in DATA_DIR; when that path would be too long for a Unix socket, in a new
 * private directory under the temporary directory (`tempDir`, default the OS's). It is never
 * served on TCP: PGlite checks no password. When neither place works, EmbeddedSocketPathError.
 */
export async function startEmbeddedDatabase(dataDir: string, options: { tempDir?: string } = {}): Promise<EmbeddedDatabase> {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const releaseLock = acquireLock(path.join(dataDir, 'embedded.lock'), dataDir);
  let socketDir: { dir: string; remove(): void } | undefined;
  let db: { close(): Promise<void> } | undefined;
  try {
    socketDir = socketDirectory(dataDir, options.tempDir ?? os.tmpdir());
    const { PGlite } = await import('@electric-sql/pglite');
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    const pglite = await PGlite.create(path.join(dataDir, 'pgdata'));
    db = pglite;

    const socketFile = path.join(socketDir.dir, SOCKET_NAME);
    fs.rmSync(socketFile, { force: true }); // left over by a process that was killed
    const server = new PGLiteSocketServer({ db: pglite, path: socketFile });
    await server.start();
    fs.chmodSync(socketFile, 0o600);
    const target: EmbeddedTarget = { host: socketDir.dir, port: SOCKET_PORT };

    const removeSocket = socketDir.remove;
    let closed = false;
    return {
      target,
      async close() {
        if (closed) return;
        closed = true;
        await server.stop();
        await pglite.close();
        fs.rmSync(socketFile, { force: true });
        removeSocket();
        releaseLock();
      },
    };
  } catch (err) {
    await db?.close().catch(() => undefined);
    socketDir?.remove();
    releaseLock();
    throw err;
  }
}

function acquireLock(lockFile: string, dataDir: string): () => void {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx', mode: 0o600 });
      return () => {
        try {
          if (fs.readFileSync(lockFile, 'utf8') === String(process.pid)) fs.rmSync(lockFile, { force: true });
        } catch {
          /* already gone */
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(fs.readFileSync(lockFile, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && isAlive(holder)) {
        throw new DataDirInUseError(dataDir, holder);
      }
      fs.rmSync(lockFile, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`could not lock ${lockFile}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
