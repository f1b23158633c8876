import type { Config } from './config';
import { openDatabaseWith, type Database } from './db/database';
import { ENTITIES } from './entities';

export type { Database, DatabaseMode } from './db/database';

/**
 * Opens the database the configuration selects (the PostgreSQL server of DATABASE_URL, or the
 * embedded PGlite database under DATA_DIR) with every domain's entities.
 */
export function openDatabase(config: Config, options: { migrate?: boolean } = {}): Promise<Database> {
  return openDatabaseWith(ENTITIES, config, options);
}
