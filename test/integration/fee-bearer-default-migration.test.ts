import 'reflect-metadata';
import { loadConfig } from '../../src/config';
import { openDatabase, type Database } from '../../src/database';
import { createScratchDatabase } from '../support/scratch-database';

const MIGRATION = 'Migration20261125030000_fee_bearer_customer_default';

/**
 * The migration that makes the customer the default fee bearer, run on a database that already
 * has merchants: it changes the default for environments made afterwards and nothing else.
 */
describe('migration: the customer bears the fee of merchants made from now on', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let db: Database;
  const sql = async <T = Record<string, unknown>>(text: string, params: unknown[] = []) => (await db.orm.em.getConnection().execute(text, params)) as T[];

  beforeAll(async () => {
    scratch = await createScratchDatabase('fee_bearer_default');
    db = await openDatabase(loadConfig({ DATABASE_URL: scratch.url, LOG_LEVEL: 'silent', DATABASE_POOL_SIZE: '2' }), { migrate: false });
    // Back to the schema as it was before this migration.
    await db.orm.getMigrator().down({ migrations: [MIGRATION] });
  });
  afterAll(async () => {
    await db?.close();
    await scratch?.drop();
  });

  const newEnvironment = async (mode: 'test' | 'live', feeBearer?: 'merchant' | 'customer') => {
    const [subsidiary] = await sql<{ id: number }>(
      `insert into subsidiary (name, country, support_email, webhook_secret_sealed) values ('Existing', 'NG', 's@existing.test', 'x') returning id`,
    );
    const [environment] = feeBearer
      ? await sql<{ id: number }>(`insert into app_environment (subsidiary_id, mode, fee_bearer) values (?, ?, ?) returning id`, [
          subsidiary!.id,
          mode,
          feeBearer,
        ])
      : await sql<{ id: number }>(`insert into app_environment (subsidiary_id, mode) values (?, ?) returning id`, [subsidiary!.id, mode]);
    return environment!.id;
  };
  const bearerOf = async (id: number) => (await sql<{ fee_bearer: string }>(`select fee_bearer from app_environment where id = ?`, [id]))[0]!.fee_bearer;
  const columnDefault = async () =>
    (
      await sql<{ column_default: string }>(
        `select column_default from information_schema.columns where table_name = 'app_environment' and column_name = 'fee_bearer'`,
      )
    )[0]!.column_default;

  it('keeps the fee bearer of every existing merchant, and new environments default to the customer', async () => {
    expect(await columnDefault()).toContain("'merchant'");
    const byOldDefault = await newEnvironment('test');
    const merchant = await newEnvironment('live', 'merchant');
    const customer = await newEnvironment('test', 'customer');
    expect(await bearerOf(byOldDefault)).toBe('merchant');

    await db.orm.getMigrator().up();
    expect(await db.orm.getMigrator().getPendingMigrations()).toEqual([]);

    expect(await bearerOf(byOldDefault)).toBe('merchant');
    expect(await bearerOf(merchant)).toBe('merchant');
    expect(await bearerOf(customer)).toBe('customer');
    expect(await columnDefault()).toContain("'customer'");
    expect(await bearerOf(await newEnvironment('test'))).toBe('customer');
  });
});
