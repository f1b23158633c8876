import 'reflect-metadata';
import { Client } from 'pg';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/database';
import { buildIfStale } from '../../scripts/build-if-stale';
import { provisionDatabase, type ProvisionedDatabase } from './postgres-server';
import { resolveChromium } from './chromium';
import { TEST_RUN_VARIABLE } from './test-processes';

/** What globalTeardown releases (Jest runs both hooks in its main process). */
export const PROVISIONED_KEY = Symbol.for('pgw.test.provisioned-database');

/**
 * Finds (or starts) the run's PostgreSQL and Chromium, hands them to every test process through
 * TEST_DATABASE_URL and CHROMIUM_PATH (workers inherit this process's environment), then
 * recreates the test database and migrates it once; test files share it and stay apart by
 * creating their own merchants (tenant isolation does the rest).
 */
export default async function globalSetup(): Promise<void> {
  // Every process this run starts inherits (or is given) the run's id; the teardown checks
  // that none is left.
  process.env[TEST_RUN_VARIABLE] = `${process.pid}-${Date.now().toString(36)}`;
  // dist/ (the service, the CLI, the SDK and the dashboard bundle) is built here once per run,
  // and only when a source changed: test files that start `node dist/...` never build it.
  await buildIfStale({ log: (line) => process.stderr.write(line) });
  // Chromium first: should it fail, no database has been made yet.
  const chromiumStarted = Date.now();
  const chromium = resolveChromium();
  const chromiumMs = Date.now() - chromiumStarted;
  process.env.CHROMIUM_PATH = chromium.path;
  Object.assign(process.env, chromium.env);

  const started = Date.now();
  const database = await provisionDatabase();
  const provisionedMs = Date.now() - started;
  (globalThis as Record<symbol, unknown>)[PROVISIONED_KEY] = database;
  process.env.TEST_DATABASE_URL = database.url;

  if (process.env.TEST_PROVISION_QUIET !== '1') {
    const shown = new URL(database.url);
    shown.password = shown.password ? '***' : '';
    process.stderr.write(
      `\n[test setup] PostgreSQL (${database.source}, ${provisionedMs} ms): ${shown}\n` +
        `[test setup] Chromium (${chromium.source}, ${chromiumMs} ms): ${chromium.path}\n`,
    );
  }

  try {
    await recreateAndMigrate(database.url);
  } catch (error) {
    await database.release().catch(() => undefined);
    throw error;
  }
  // MikroORM keeps entity metadata on globalThis; when Jest runs tests in this same process
  // (one test file), objects from this realm must not leak into the tests' realm.
  for (const key of Object.keys(globalThis)) if (key.startsWith('mikro-orm-')) delete (globalThis as Record<string, unknown>)[key];
}

async function recreateAndMigrate(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const dbName = url.pathname.replace(/^\//, '');
  if (!/^[A-Za-z0-9_]+$/.test(dbName)) throw new Error(`unsafe test database name: ${dbName}`);
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    await client.query(`drop database if exists "${dbName}" with (force)`);
    await client.query(`create database "${dbName}"`);
  } finally {
    await client.end();
  }
  const config = loadConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });
  const db = await openDatabase(config, { migrate: true });
  await db.close();
}

export type { ProvisionedDatabase };
