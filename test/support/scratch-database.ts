import 'reflect-metadata';
import net from 'node:net';
import { Client } from 'pg';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/database';
import { TEST_DATABASE_URL } from './database';

/**
 * A migrated database beside the test database, for one test file alone: for tests whose
 * background work (webhook dispatchers, expiry sweeps, reconciliation, spawned service
 * processes) acts on everything it finds, so that it finds only its own file's.
 */
export async function createScratchDatabase(suffix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const url = new URL(TEST_DATABASE_URL);
  const name = `${url.pathname.replace(/^\//, '')}_${suffix}`;
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`unsafe database name ${name}`);
  url.pathname = `/${name}`;
  const admin = async (statement: string) => {
    const adminUrl = new URL(TEST_DATABASE_URL);
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
  const db = await openDatabase(loadConfig({ DATABASE_URL: url.toString(), LOG_LEVEL: 'silent', DATABASE_POOL_SIZE: '2' }), { migrate: true });
  await db.close();
  return { url: url.toString(), drop: () => admin(`drop database if exists "${name}" with (force)`).catch(() => undefined) };
}

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
