import 'reflect-metadata';
import { loadConfig } from '../../src/config';
import { openDatabase, type Database } from '../../src/database';
import { TEST_DATABASE_URL } from '../support/database';
import { startTestService, type TestService } from '../support/service';
import { createTestMerchant } from '../support/merchants';
import { Order } from '../../src/orders/order.entity';

describe('data model on PostgreSQL', () => {
  let db: Database;
  let t: TestService;
  beforeAll(async () => {
    db = await openDatabase(loadConfig({ DATABASE_URL: TEST_DATABASE_URL, DATABASE_POOL_SIZE: '2' }), { migrate: false });
    t = await startTestService();
  });
  afterAll(async () => {
    await db.close();
    await t.close();
  });
  const sql = (query: string, params: unknown[] = []) => db.orm.em.getConnection().execute(query, params);

  it('has every migration applied and the entities in step with the migrations', async () => {
    expect(await db.orm.getMigrator().getPendingMigrations()).toEqual([]);
    const diff = await db.orm.getSchemaGenerator().getUpdateSchemaSQL({ wrap: false, safe: true });
    expect(diff.trim()).toBe('');
  });

  it('seeds the payment link types exactly as documented', async () => {
    expect(await sql('select id, code, payment_link_name from payment_link_type order by id')).toEqual([
      { id: 1, code: 'SC', payment_link_name: 'Single Charge' },
      { id: 2, code: 'MC', payment_link_name: 'Multiple Charge' },
      { id: 5, code: 'SUB', payment_link_name: 'Subscription Payments' },
    ]);
  });

  it('seeds the frequencies exactly as documented', async () => {
    const rows = await sql('select id, name, hours, days from frequency order by id');
    expect(rows.map((r: any) => [r.id, r.name, r.hours, r.days])).toEqual([
      [1, 'Hourly', 1, 0],
      [2, 'Daily', 24, 1],
      [3, 'Weekly', 168, 7],
      [4, 'Bi-Weekly', 336, 14],
      [5, 'Every 3 Weeks', 504, 21],
      [6, 'Monthly', 720, 30],
      [7, 'Bi-Monthly', 1440, 60],
      [8, 'Every 3 Months', 2160, 90],
      [9, 'Every 6 Months', 4320, 180],
      [10, 'Yearly', 8760, 365],
      [11, 'Bi-Yearly', 17520, 730],
    ]);
  });

  it('seeds the Nigerian banks with unique codes', async () => {
    const banks = await sql('select name, bank_code, country_id from bank order by id');
    expect(banks.length).toBeGreaterThanOrEqual(30);
    expect(banks).toEqual(
      expect.arrayContaining([
        { name: 'Access Bank', bank_code: '044', country_id: 566 },
        { name: 'Guaranty Trust Bank', bank_code: '058', country_id: 566 },
        { name: 'Zenith Bank', bank_code: '057', country_id: 566 },
      ]),
    );
  });

  it('has no column that could hold a full card number or a security code', async () => {
    const columns = (await sql(`select column_name from information_schema.columns where table_name = 'card_detail' order by ordinal_position`)).map(
      (r: any) => r.column_name,
    );
    expect(columns).toEqual([
      'id',
      'order_payment_id',
      'environment_id',
      'status',
      'country',
      'card_token',
      'card_expiry_month',
      'card_expiry_year',
      'card_type',
      'card_issuer',
      'card_first_six_digits',
      'card_last_four_digits',
      'date_created',
    ]);
  });

  it('reads each sweep from an index that holds only the rows it looks for', async () => {
    const planOf = (query: string) =>
      db.orm.em.fork().transactional(async (em) => {
        await em.execute('set local enable_seqscan = off');
        const rows: Array<{ 'QUERY PLAN': string }> = await em.execute(`explain (costs off) ${query}`);
        return rows.map((r) => r['QUERY PLAN']).join('\n');
      });
    // The planner may walk the index in order or build a bitmap from it, depending on how many
    // rows the shared database holds at that moment; either way the sweep reads only that index.
    const readsFrom = (index: string) => new RegExp(`(Index Scan using|Index Only Scan using|Bitmap Index Scan on) ${index}\\b`);
    const at = `'2026-01-01T00:00:00Z'::timestamptz`;
    expect(await planOf(`select id from checkout_order where status_id = 1 and expires_at <= ${at} order by expires_at limit 100`)).toMatch(
      readsFrom('checkout_order_initiated_expires_at_index'),
    );
    expect(await planOf(`select id from checkout_order where status_id = 6 and authorized_at <= ${at} order by authorized_at limit 100`)).toMatch(
      readsFrom('checkout_order_authorized_authorized_at_index'),
    );
    expect(
      await planOf(`select id from order_payment where status_id = 2 and authentication_expires_at <= ${at} order by authentication_expires_at limit 100`),
    ).toMatch(readsFrom('order_payment_awaiting_authentication_expires_at_index'));
    expect(await planOf(`select id from order_payment where status_id = 3 order by processing_started_at nulls first limit 100`)).toMatch(
      readsFrom('order_payment_processing_started_at_index'),
    );
    expect(await planOf(`select count(*) from checkout_order where payment_link_id = 1 and status_id = 5`)).toMatch(
      /checkout_order_payment_link_id_status_id_index/,
    );
    // The recurring claim: a subscription with a charge still Processing is not charged again.
    expect(
      await planOf(
        `select r.id from recurring_payment r where r.state = 'active' and r.next_charge_at <= ${at}
          and not exists (select 1 from checkout_order o where o.recurring_payment_id = r.id and o.status_id = 3) order by r.next_charge_at limit 1`,
      ),
    ).toMatch(/checkout_order_recurring_payment_id_status_id_index/);
    // A settlement changes the status, so it writes an entry in every index of the order that
    // holds its row: none of them repeats another's leading columns.
    const indexes = (await sql(`select indexname, indexdef from pg_indexes where tablename = 'checkout_order'`)) as Array<{
      indexname: string;
      indexdef: string;
    }>;
    expect(indexes.map((i) => i.indexname)).not.toContain('checkout_order_environment_id_status_id_index');
    for (const name of [
      'checkout_order_initiated_expires_at_index',
      'checkout_order_authorized_authorized_at_index',
      'checkout_order_payment_link_id_status_id_index',
    ])
      expect(indexes.find((i) => i.indexname === name)?.indexdef).toMatch(/ WHERE /);
  });

  describe('orders', () => {
    let testEnv: number;
    let liveEnv: number;
    let otherEnv: number;
    beforeAll(async () => {
      const [m, other] = await Promise.all([createTestMerchant(t), createTestMerchant(t)]);
      const envs = await sql('select id, subsidiary_id, mode from app_environment where subsidiary_id in (?, ?)', [m.subsidiary.id, other.subsidiary.id]);
      testEnv = envs.find((e: any) => e.subsidiary_id === m.subsidiary.id && e.mode === 'test')!.id;
      liveEnv = envs.find((e: any) => e.subsidiary_id === m.subsidiary.id && e.mode === 'live')!.id;
      otherEnv = envs.find((e: any) => e.subsidiary_id === other.subsidiary.id && e.mode === 'test')!.id;
    });

    let n = 0;
    const insertOrder = (environmentId: number, reference: string, amount = '100.00') => {
      n += 1;
      return sql(
        `insert into checkout_order (environment_id, reference, processor_reference, payment_reference, amount, currency, total_charged_amount, narration, redirect_url)
         values (?, ?, ?, ?, ?, 'NGN', ?, 'n', 'https://m.test/done') returning id, amount::text as amount`,
        [environmentId, reference, `PR-${process.pid}-${n}`, `PY-${process.pid}-${n}`, amount, amount],
      );
    };

    it('enforces a unique reference per merchant and environment in the database', async () => {
      await insertOrder(testEnv, 'ORD-1');
      await expect(insertOrder(testEnv, 'ORD-1')).rejects.toThrow(/checkout_order_environment_reference_unique/);
      // The same reference is free in the live environment and for another merchant.
      await expect(insertOrder(liveEnv, 'ORD-1')).resolves.toHaveLength(1);
      await expect(insertOrder(otherEnv, 'ORD-1')).resolves.toHaveLength(1);
    });

    it('stores amounts exactly, as decimals', async () => {
      const [row] = await insertOrder(testEnv, 'ORD-EXACT', '1234567890123456.0001');
      expect(row.amount).toBe('1234567890123456.0001');
    });

    it("matches no order when a query's environment scope is undefined, instead of dropping the scope", async () => {
      await insertOrder(testEnv, 'ORD-SCOPED');
      await insertOrder(otherEnv, 'ORD-SCOPED');
      const em = db.orm.em.fork();
      // As a resolver would pass it when the reference it was given never arrived.
      const missing = undefined as unknown as number;
      expect(await em.count(Order, { environment: testEnv, reference: 'ORD-SCOPED' })).toBe(1);
      expect(await em.count(Order, { environment: missing, reference: 'ORD-SCOPED' })).toBe(0);
      expect(await em.find(Order, { environment: { id: missing } })).toEqual([]);
    });

    it('refuses zero and negative amounts in the database itself', async () => {
      await expect(insertOrder(testEnv, 'ORD-ZERO', '0')).rejects.toThrow(/checkout_order_amount_positive/);
      await expect(insertOrder(testEnv, 'ORD-NEG', '-5')).rejects.toThrow(/checkout_order_amount_positive/);
    });
  });
});
