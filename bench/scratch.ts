import net from 'node:net';
import { Client } from 'pg';

/**
 * Throwaway local resources, shared by the bench and the tests (test/support/scratch-database.ts
 * adds the migrations). It lives with the bench because the bench is built and the tests are
 * not: the tests may import from here, the bench may not import from test/.
 */

/** A port free on loopback now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A fresh, empty database named `<server's database>_<suffix>` (`pgw_bench_<suffix>` when the URL
 * names none) on the PostgreSQL server of `serverUrl`, dropped first if a previous run left it,
 * with the way to drop it.
 */
export async function scratchDatabase(serverUrl: string, suffix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const url = new URL(serverUrl);
  const name = `${url.pathname.replace(/^\//, '') || 'pgw_bench'}_${suffix}`;
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`unsafe database name ${name}`);
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
