import { Client } from 'pg';
import { TEST_DATABASE_URL } from '../../support/database';
import { loadConfig } from '../../../src/config';
import { openDatabase, type Database } from '../../../src/database';
import { sqlRunner } from '../../../src/db/sql';

type KnexClient = { acquireConnection(): Promise<Client>; releaseConnection(connection: Client): Promise<void> };

/**
 * A transaction left open by a fault (begun, then nothing) would hold its row locks for good and
 * stall every payment waiting on them. The service's sessions on a PostgreSQL server carry
 * idle_in_transaction_session_timeout: the server ends such a session, its locks go, and the pool
 * goes on with fresh connections.
 */
describe('a transaction left idle by the service', () => {
  let db: Database;
  const observer = new Client({ connectionString: TEST_DATABASE_URL });

  beforeAll(async () => {
    await observer.connect();
    db = await openDatabase(
      loadConfig({ DATABASE_URL: TEST_DATABASE_URL, LOG_LEVEL: 'silent', DATABASE_POOL_SIZE: '2', DATABASE_IDLE_IN_TRANSACTION_MS: '300' }),
      { migrate: false },
    );
  });
  afterAll(async () => {
    await db.close();
    await observer.end();
  });

  it('is ended by the server, its lock released, and the pool serves the next statement', async () => {
    const knex = db.orm.em.getConnection().getKnex().client as unknown as KnexClient;
    const leaked = await knex.acquireConnection();
    const [{ pid }] = (await leaked.query('select pg_backend_pid() as pid')).rows as Array<{ pid: number }>;
    expect((await leaked.query('show idle_in_transaction_session_timeout')).rows[0]).toEqual({ idle_in_transaction_session_timeout: '300ms' });
    await leaked.query('begin');
    await leaked.query(`select pg_advisory_xact_lock(4242)`);
    // Another session waits on the leaked one's lock until the server ends the leaked session.
    await observer.query(`set lock_timeout = '30s'`);
    await observer.query('begin');
    await observer.query(`select pg_advisory_xact_lock(4242)`);
    await observer.query('rollback');
    const { rows } = await observer.query('select count(*)::int as n from pg_stat_activity where pid = $1', [pid]);
    expect(rows[0]).toEqual({ n: 0 });
    await knex.releaseConnection(leaked);
    // The dead connection is not handed out again: statements on the pool still run.
    const run = sqlRunner(db.orm);
    for (let i = 0; i < 3; i += 1) expect(await run<{ one: number }>('select 1 as one', [])).toEqual([{ one: 1 }]);
  });

  it('is ended after 60 s by default, and never with DATABASE_IDLE_IN_TRANSACTION_MS=0', () => {
    expect(loadConfig({ DATABASE_URL: TEST_DATABASE_URL, DATABASE_IDLE_IN_TRANSACTION_MS: '0' }).databaseIdleInTransactionMs).toBe(0);
    expect(loadConfig({ DATABASE_URL: TEST_DATABASE_URL }).databaseIdleInTransactionMs).toBe(60_000);
  });
});
