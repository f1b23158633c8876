import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';

/**
 * A fixed master key for benchmark databases only: services of one run (and of later runs on the
 * same BENCH_DATABASE_URL) must share it, since the service refuses a database whose secrets were
 * sealed under another key.
 */
const BENCH_MASTER_KEY = 'be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c';

/** The database of a benchmark service: BENCH_DATABASE_URL when set (a scratch PostgreSQL database), else the embedded one. */
export function benchDatabaseEnv(): Record<string, string> {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  return { ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), MASTER_KEY: BENCH_MASTER_KEY };
}

/** A port free on loopback now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

/**
 * A fresh, empty database named `<server's database>_<suffix>` on the PostgreSQL server of
 * `serverUrl` (dropped first if a previous run left it), with the way to drop it.
 */
export async function scratchDatabase(serverUrl: string, suffix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const url = new URL(serverUrl);
  const name = `${url.pathname.replace(/^\//, '') || 'pgw_bench'}_${suffix}`;
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`bench: unsafe database name ${name}`);
  const admin = async (statement: string) => {
    const adminUrl = new URL(serverUrl);
    adminUrl.pathname = '/postgres';
    const client = new Client({ connectionString: adminUrl.toString() });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`drop database if exists "${name}" with (force)`);
  await admin(`create database "${name}"`);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`drop database if exists "${name}" with (force)`).catch(() => undefined) };
}
