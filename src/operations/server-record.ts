import fs from 'node:fs';
import path from 'node:path';

/**
 * A running server on the embedded database notes in DATA_DIR where it listens, so the CLI,
 * which cannot open the locked database, can reach the server's admin API instead.
 */
export interface ServerRecord {
  pid: number;
  /** Where a local client reaches it, e.g. http://127.0.0.1:4000. */
  url: string;
}

const FILE = 'server.json';

export function writeServerRecord(dataDir: string, record: ServerRecord): () => void {
  const file = path.join(dataDir, FILE);
  fs.writeFileSync(file, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  return () => {
    try {
      if ((JSON.parse(fs.readFileSync(file, 'utf8')) as ServerRecord).pid === record.pid) fs.rmSync(file, { force: true });
    } catch {
      /* already gone */
    }
  };
}

export function readServerRecord(dataDir: string): ServerRecord | undefined {
  try {
    const record = JSON.parse(fs.readFileSync(path.join(dataDir, FILE), 'utf8')) as Partial<ServerRecord>;
    if (typeof record.pid === 'number' && typeof record.url === 'string') return { pid: record.pid, url: record.url };
  } catch {
    /* absent or unreadable: no server to talk to */
  }
  return undefined;
}

/** The address a local client uses for a server listening on host:port (a wildcard host means loopback). */
export function localUrl(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '' || host === '::' || host === '[::]') return `http://127.0.0.1:${port}`;
  return host.includes(':') ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}
