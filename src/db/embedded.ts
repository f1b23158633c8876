import fs from 'node:fs';
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

const SOCKET_PORT = 5432;
/** sun_path is 108 bytes on Linux; pg appends "/.s.PGSQL.5432". */
const MAX_SOCKET_PATH = 100;

/**
 * Starts PGlite (PostgreSQL compiled to WebAssembly) on DATA_DIR and serves it on a Unix
 * socket inside DATA_DIR, so the ordinary PostgreSQL driver, SQL and migrations are used in
 * both database modes. PGlite is single-connection: the pool must hold one connection.
 * A lock file keeps a second process (a CLI, another server) off the same files.
 */
export async function startEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const releaseLock = acquireLock(path.join(dataDir, 'embedded.lock'), dataDir);
  try {
    const { PGlite } = await import('@electric-sql/pglite');
    const { PGLiteSocketServer } = await import('@electric-sql/pglite-socket');
    const db = await PGlite.create(path.join(dataDir, 'pgdata'));

    const socketFile = path.join(dataDir, `.s.PGSQL.${SOCKET_PORT}`);
    let server: InstanceType<typeof PGLiteSocketServer>;
    let target: EmbeddedTarget;
    if (socketFile.length <= MAX_SOCKET_PATH) {
      fs.rmSync(socketFile, { force: true }); // left over by a process that was killed
      server = new PGLiteSocketServer({ db, path: socketFile });
      await server.start();
      target = { host: dataDir, port: SOCKET_PORT };
    } else {
      server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
      await server.start();
      const address = (server as unknown as { server?: { address(): { port: number } } }).server?.address();
      if (!address) throw new Error('embedded database: could not read the port of its socket server');
      target = { host: '127.0.0.1', port: address.port };
    }

    let closed = false;
    return {
      target,
      async close() {
        if (closed) return;
        closed = true;
        await server.stop();
        await db.close();
        fs.rmSync(socketFile, { force: true });
        releaseLock();
      },
    };
  } catch (err) {
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
