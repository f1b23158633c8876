import { PROVISIONED_KEY } from './global-setup';
import type { ProvisionedDatabase } from './postgres-server';

/** Stops the PostgreSQL the run started, or drops the databases it made on a local server. */
export default async function globalTeardown(): Promise<void> {
  const database = (globalThis as Record<symbol, unknown>)[PROVISIONED_KEY] as ProvisionedDatabase | undefined;
  delete (globalThis as Record<symbol, unknown>)[PROVISIONED_KEY];
  await database?.release();
}
