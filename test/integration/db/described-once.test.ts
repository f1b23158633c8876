import { Client } from 'pg';
import { TEST_DATABASE_URL } from '../../support/database';
import { runDescribedOnce } from '../../../src/db/described-once';
import type { PreparedStatement } from '../../../src/db/sql';

/**
 * Named statements run through runDescribedOnce ask the server for their row description once
 * per connection, and answer exactly what the driver's own query answers, every time.
 */
describe('named statements described once per connection', () => {
  const clients: Client[] = [];
  /** A new connection, counting the Describe messages it sends. */
  const connect = async () => {
    const client = new Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    clients.push(client);
    const connection = (client as unknown as { connection: { describe: (msg: unknown) => void } }).connection;
    const describe = connection.describe.bind(connection);
    const counted = { describes: 0 };
    connection.describe = (msg) => {
      counted.describes += 1;
      describe(msg);
    };
    return { client, counted };
  };
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.end()));
  });

  const TYPED: PreparedStatement = {
    name: 'pgw_test_described_typed_v1',
    text: `select $1::int as n, ($1::int * 2)::bigint as twice, '1500.5000'::numeric(20,4) as amount, $2::text as label,
      timestamptz '2026-11-26 10:00:00.123456+00' as at, json_build_object('k', $1::int) as doc, null::text as nothing`,
  };
  const OTHER: PreparedStatement = { name: 'pgw_test_described_other_v1', text: `select $1::text || '!' as shout, true as yes` };

  it('describes a statement on its first run only, and answers what the driver answers on every run', async () => {
    const { client, counted } = await connect();
    for (const n of [1, 2, 3]) {
      const rows = await runDescribedOnce(client, TYPED, [n, `label ${n}`]);
      const plain = await client.query({ text: TYPED.text, values: [n, `label ${n}`] });
      expect(rows).toEqual(plain.rows);
      expect(rows[0]).toMatchObject({ n, label: `label ${n}`, nothing: null, doc: { k: n } });
    }
    // One Describe for the named statement's first run, one per unnamed driver query (three).
    expect(counted.describes).toBe(1 + 3);
  });

  it('keeps each statement its own columns on one connection, and describes again on a new connection', async () => {
    const first = await connect();
    for (let i = 0; i < 2; i += 1) {
      expect(await runDescribedOnce(first.client, TYPED, [7, 'x'])).toEqual([expect.objectContaining({ n: 7, twice: '14', amount: '1500.5000' })]);
      expect(await runDescribedOnce(first.client, OTHER, ['hey'])).toEqual([{ shout: 'hey!', yes: true }]);
    }
    expect(first.counted.describes).toBe(2);

    const second = await connect();
    expect(await runDescribedOnce(second.client, OTHER, ['again'])).toEqual([{ shout: 'again!', yes: true }]);
    expect(await runDescribedOnce(second.client, OTHER, ['and again'])).toEqual([{ shout: 'and again!', yes: true }]);
    expect(second.counted.describes).toBe(1);
  });

  it('runs statements that answer no rows, and reports a failed run without breaking the next', async () => {
    const { client } = await connect();
    await client.query('create temporary table described_once_t (id int primary key)');
    const insert: PreparedStatement = { name: 'pgw_test_described_insert_v1', text: 'insert into described_once_t (id) values ($1::int)' };
    expect(await runDescribedOnce(client, insert, [1])).toEqual([]);
    await expect(runDescribedOnce(client, insert, [1])).rejects.toMatchObject({ code: '23505' });
    expect(await runDescribedOnce(client, insert, [2])).toEqual([]);
    expect(await runDescribedOnce(client, TYPED, [5, 'after'])).toEqual([expect.objectContaining({ n: 5, label: 'after' })]);
    expect(await runDescribedOnce(client, TYPED, [6, 'after'])).toEqual([expect.objectContaining({ n: 6, label: 'after' })]);
  });
});
