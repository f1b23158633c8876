import { PROVISIONED_KEY } from './global-setup';
import type { ProvisionedDatabase } from './postgres-server';
import { assertNoProcessLeft, TEST_RUN_VARIABLE } from './test-processes';
import { reportWorkersThatDidNotExit } from './worker-exit';

/**
 * Stops the PostgreSQL the run started (or drops the databases it made on a local server), then
 * fails the run if any process the tests started is still alive (killing it first), or if a
 * Jest worker could not exit because something a test file made still held it (worker-exit.ts).
 */
export default async function globalTeardown(): Promise<void> {
  const database = (globalThis as Record<symbol, unknown>)[PROVISIONED_KEY] as ProvisionedDatabase | undefined;
  delete (globalThis as Record<symbol, unknown>)[PROVISIONED_KEY];
  await database?.release();
  const heldWorkers = reportWorkersThatDidNotExit();
  const runId = process.env[TEST_RUN_VARIABLE];
  if (runId) assertNoProcessLeft(runId);
  if (heldWorkers > 0) throw new Error(`${heldWorkers} Jest worker(s) were kept alive by what a test file left open (listed above)`);
}
