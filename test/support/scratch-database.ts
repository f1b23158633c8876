import 'reflect-metadata';
import { freePort, scratchDatabase } from '../../bench/scratch';
import { loadConfig } from '../../src/config';
import { openDatabase } from '../../src/database';
import { TEST_DATABASE_URL } from './database';

export { freePort };

/**
 * A migrated database beside the test database, for one test file alone: for tests whose
 * background work (webhook dispatchers, expiry sweeps, reconciliation, spawned service
 * processes) acts on everything it finds, so that it finds only its own file's.
 */
export async function createScratchDatabase(suffix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const scratch = await scratchDatabase(TEST_DATABASE_URL, suffix);
  const db = await openDatabase(loadConfig({ DATABASE_URL: scratch.url, LOG_LEVEL: 'silent', DATABASE_POOL_SIZE: '2' }), { migrate: true });
  await db.close();
  return scratch;
}
