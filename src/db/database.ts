import { MikroORM, type Options } from '@mikro-orm/core';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import type { Config } from '../config';
import { MIGRATIONS } from '../../migrations';
import { startEmbeddedDatabase, type EmbeddedDatabase } from './embedded';
import { openReplicaPool, ReadRouting } from './read-routing';
import { RedisWriterMarks } from './writer-marks';

export type DatabaseMode = 'postgres' | 'embedded';

export interface Database {
  orm: MikroORM<PostgreSqlDriver>;
  mode: DatabaseMode;
  /** Where list reads go: the read replica of DATABASE_READ_URL when set, else the primary. */
  reads: ReadRouting;
  close(): Promise<void>;
}

/** The entity classes the ORM maps. */
export type EntityList = NonNullable<Options<PostgreSqlDriver>['entities']>;

type Connection = { clientUrl: string } | { host: string; port: number; user: string; dbName: string };

/**
 * The ORM's settings for `entities` (the composition root's registry: `db/` knows no domain).
 * `idleInTransactionMs` (a PostgreSQL server's sessions only; 0: none): the server ends a session
 * left idle that long inside a transaction, so a transaction leaked by a fault cannot hold its
 * row locks (an order's, a link's) and stall every payment behind them for good.
 */
export function ormOptions(
  connection: Connection,
  poolSize: number,
  entities: EntityList,
  idleInTransactionMs = 0,
  embedded = false,
): Options<PostgreSqlDriver> {
  return {
    driver: PostgreSqlDriver,
    ...connection,
    entities,
    extensions: [Migrator],
    migrations: {
      migrationsList: MIGRATIONS,
      tableName: 'schema_migrations',
      transactional: true,
      allOrNothing: true,
      disableForeignKeys: false,
      silent: true,
      snapshot: false,
    },
    pool: { min: 0, max: poolSize, ...(embedded ? { afterCreate: forgetPreparedStatements } : {}) },
    // A server that does not answer a connection attempt (host down, packets dropped) fails it
    // within 10 s instead of the operating system's minutes: requests fail (503), readiness says so.
    // The query builder's own warnings ("Connection Error: …") would be unstructured console
    // lines; the same failures reach the JSON log through the requests and jobs they fail.
    driverOptions: {
      connection: { connectionTimeoutMillis: 10_000, ...(idleInTransactionMs > 0 ? { idle_in_transaction_session_timeout: idleInTransactionMs } : {}) },
      log: { warn() {}, error() {}, deprecate() {}, debug() {} },
    },
    discovery: { warnWhenNoEntities: true },
    allowGlobalContext: false,
    forceUndefined: false,
    debug: false,
    // A condition whose value is undefined stays a condition (`is null`), so a scope that failed
    // to arrive (an environment, an order) matches nothing instead of being dropped and matching
    // every row; an optional filter is left out of the query explicitly by its caller.
    ignoreUndefinedInQuery: false,
  };
}

/**
 * The embedded database is one PostgreSQL session whatever the connections to its socket: a
 * statement prepared through a connection that is gone stays prepared in it. The pg driver of a
 * new connection knows of none and would prepare each named statement again, which the session
 * refuses for good ("prepared statement already exists"): so a new connection starts by
 * forgetting them all.
 */
function forgetPreparedStatements(
  connection: { query(sql: string, done: (err: Error | null) => void): void },
  done: (err: Error | null, c: unknown) => void,
): void {
  connection.query('deallocate all', (err) => done(err, connection));
}

/**
 * Opens the database the configuration selects, mapping `entities`: the PostgreSQL server of
 * DATABASE_URL, or the embedded PGlite database under DATA_DIR.
 */
export async function openDatabaseWith(entities: EntityList, config: Config, options: { migrate?: boolean } = {}): Promise<Database> {
  let embedded: EmbeddedDatabase | undefined;
  let connection: Connection;
  let poolSize = config.databasePoolSize;
  if (config.databaseUrl) {
    connection = { clientUrl: config.databaseUrl };
  } else if (config.databaseReadUrl) {
    // loadConfig refuses this already; a configuration built otherwise is refused here too.
    throw new Error('DATABASE_READ_URL needs DATABASE_URL: the embedded database has no read replica');
  } else {
    embedded = await startEmbeddedDatabase(config.dataDir);
    connection = { ...embedded.target, user: 'postgres', dbName: 'postgres' };
    poolSize = 1;
  }
  try {
    // The embedded database is one session of this process: nothing to guard against there.
    const orm = await MikroORM.init(ormOptions(connection, poolSize, entities, embedded ? 0 : config.databaseIdleInTransactionMs, embedded !== undefined));
    if (options.migrate ?? config.migrateOnStart) {
      await orm.getMigrator().up();
    }
    // Opened lazily by pg: a replica that is down at start does not stop the service (reads fall back to the primary).
    const replica = config.databaseReadUrl ? openReplicaPool(config.databaseReadUrl, poolSize) : null;
    // With several instances (REDIS_URL), who wrote lately is known to all of them.
    const shared = replica && config.redisUrl && config.databaseReadAfterWriteMs > 0 ? new RedisWriterMarks(config.redisUrl) : undefined;
    await shared?.whenReady();
    return {
      orm,
      mode: embedded ? 'embedded' : 'postgres',
      reads: new ReadRouting(orm, replica, { afterWriteMs: config.databaseReadAfterWriteMs, shared }),
      async close() {
        await shared?.close();
        await replica?.end();
        await orm.close(true);
        await embedded?.close();
      },
    };
  } catch (err) {
    await embedded?.close();
    throw err;
  }
}
