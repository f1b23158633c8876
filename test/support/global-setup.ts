import 'reflect-metadata';
import { Client } from 'pg';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/db/database';
import { TEST_DATABASE_URL } from './database';
import { buildDashboard } from '../../src/dashboard/build';

/**
 * Recreates the test database and migrates it once; test files then share it and stay
 * apart by creating their own merchants (tenant isolation does the rest).
 */
export default async function globalSetup(): Promise<void> {
  // The dashboard the tests serve is always built from the current sources.
  await buildDashboard();
  const url = new URL(TEST_DATABASE_URL);
  const dbName = url.pathname.replace(/^\//, '');
  if (!/^[A-Za-z0-9_]+$/.test(dbName)) throw new Error(`unsafe test database name: ${dbName}`);
  const admin = new URL(TEST_DATABASE_URL);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists "${dbName}" with (force)`);
    await client.query(`create database "${dbName}"`);
  } finally {
    await client.end();
  }
  const config = loadConfig({ DATABASE_URL: TEST_DATABASE_URL, LOG_LEVEL: 'silent' });
  const db = await openDatabase(config, { migrate: true });
  await db.close();
  // MikroORM keeps entity metadata on globalThis; when Jest runs tests in this same process
  // (one test file), objects from this realm must not leak into the tests' realm.
  for (const key of Object.keys(globalThis)) if (key.startsWith('mikro-orm-')) delete (globalThis as Record<string, unknown>)[key];
}
