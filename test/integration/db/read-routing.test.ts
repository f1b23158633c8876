import 'reflect-metadata';
import type { Pool } from 'pg';
import { loadConfig } from '../../../src/config';
import { openDatabase, type Database } from '../../../src/database';
import { openReplicaPool, ReadRouting, REPLICA_RETRY_MS, type ReadNotice } from '../../../src/db/read-routing';
import { TEST_DATABASE_URL } from '../../support/database';
import { freePort } from '../../support/scratch-database';
import { describeWithRedis, startRedisServer, type RedisServer } from '../../support/redis-server';
import { RedisWriterMarks } from '../../../src/db/writer-marks';
import { waitFor } from '../events/helpers';

/**
 * Where ReadRouting sends a statement, told by its notices. The "replica" here is a second pool
 * on the test database (the real standby is in read-replica.test.ts): what is checked is the
 * choice and the bookkeeping, on a clock the test moves.
 */
/** Reads as `caller` through `reads`; answers where each statement ran and why (`server:reason`, `:error` on the read that found the replica failing). */
function readerOf(reads: ReadRouting): (caller: string | undefined) => Promise<string[]> {
  const notices: ReadNotice[] = [];
  reads.onRead((n) => notices.push(n));
  return async (caller) => {
    notices.length = 0;
    const [row] = await reads.for(caller)<{ one: number }>('select 1 as one', []);
    expect(row?.one).toBe(1);
    return notices.map((n) => `${n.server}:${n.reason}${n.error ? ':error' : ''}`);
  };
}

describe('the read routing of list reads', () => {
  let db: Database;
  const pools: Pool[] = [];
  let now = 1_000_000;

  const routing = (replicaUrl: string, options: { afterWriteMs: number; maxWriters?: number }) => {
    const pool = openReplicaPool(replicaUrl, 2);
    pools.push(pool);
    const reads = new ReadRouting(db.orm, pool, { ...options, now: () => now });
    return { reads, read: readerOf(reads) };
  };

  beforeAll(async () => {
    db = await openDatabase(loadConfig({ DATABASE_URL: TEST_DATABASE_URL, LOG_LEVEL: 'silent', DATABASE_POOL_SIZE: '2' }), { migrate: false });
  });
  afterAll(async () => {
    for (const pool of pools) await pool.end();
    await db.close();
  });

  it('sends a caller that wrote to the primary for the window, and everyone else to the replica', async () => {
    const { reads, read } = routing(TEST_DATABASE_URL, { afterWriteMs: 5000 });
    expect(await read('key:1')).toEqual(['replica:replica']);
    await reads.wrote('key:1');
    expect(await read('key:1')).toEqual(['primary:own_write']);
    expect(await read('member:7')).toEqual(['replica:replica']);
    expect(await read(undefined)).toEqual(['replica:replica']);
    now += 4999;
    expect(await read('key:1')).toEqual(['primary:own_write']);
    now += 1;
    expect(await read('key:1')).toEqual(['replica:replica']);
  });

  it('remembers a bounded number of writers; forgetting one in its window sends every caller to the primary until that window ends', async () => {
    const { reads, read } = routing(TEST_DATABASE_URL, { afterWriteMs: 1000, maxWriters: 2 });
    await reads.wrote('key:1');
    now += 100;
    await reads.wrote('key:2');
    await reads.wrote('key:3'); // key:1 is forgotten, 900 ms before its window ends
    expect(await read('key:9')).toEqual(['primary:own_write']);
    expect(await read('key:3')).toEqual(['primary:own_write']);
    now += 900;
    expect(await read('key:9')).toEqual(['replica:replica']);
    expect(await read('key:1')).toEqual(['replica:replica']);
    expect(await read('key:3')).toEqual(['primary:own_write']);
    // Writers whose windows ended make room without forgetting anyone.
    now += 1000;
    await reads.wrote('key:4');
    await reads.wrote('key:5');
    expect(await read('key:9')).toEqual(['replica:replica']);
  });

  it('falls back to the primary when the replica cannot be reached, and tries it again after a rest', async () => {
    const closed = `postgresql://postgres@127.0.0.1:${await freePort()}/nothing`;
    const { read } = routing(closed, { afterWriteMs: 5000 });
    expect(await read('key:1')).toEqual(['primary:replica_unavailable:error']);
    expect(await read('key:2')).toEqual(['primary:replica_unavailable']);
    now += REPLICA_RETRY_MS;
    expect(await read('key:2')).toEqual(['primary:replica_unavailable:error']);
  });

  it('reads from the primary alone without a replica, whatever the caller', async () => {
    const reads = new ReadRouting(db.orm, null, { afterWriteMs: 5000 });
    const notices: ReadNotice[] = [];
    reads.onRead((n) => notices.push(n));
    await reads.wrote('key:1');
    expect(await reads.for('key:1')('select 1 as one', [])).toEqual([{ one: 1 }]);
    expect(await reads.for('key:2')('select 1 as one', [])).toEqual([{ one: 1 }]);
    expect(notices).toEqual([]);
  });

  it('asks adapters to report writes only with a replica and a window after writes', () => {
    const pool = openReplicaPool(TEST_DATABASE_URL, 1);
    pools.push(pool);
    expect(new ReadRouting(db.orm, null, { afterWriteMs: 5000 }).tracksWriters).toBe(false);
    expect(new ReadRouting(db.orm, pool, { afterWriteMs: 0 }).tracksWriters).toBe(false);
    expect(new ReadRouting(db.orm, pool, { afterWriteMs: 5000 }).tracksWriters).toBe(true);
  });
});

describeWithRedis('the read routing of several instances sharing who wrote (REDIS_URL)', () => {
  let db: Database;
  let redis: RedisServer;
  const closing: Array<() => Promise<void>> = [];

  beforeAll(async () => {
    db = await openDatabase(loadConfig({ DATABASE_URL: TEST_DATABASE_URL, LOG_LEVEL: 'silent', DATABASE_POOL_SIZE: '2' }), { migrate: false });
    redis = await startRedisServer();
  }, 30_000);
  afterAll(async () => {
    for (const close of closing) await close();
    await redis?.stop();
    await db.close();
  });

  /** One instance's routing: its own memory of writers, and the record shared through Redis. */
  const instance = async (afterWriteMs: number) => {
    const pool = openReplicaPool(TEST_DATABASE_URL, 2);
    const shared = new RedisWriterMarks(redis.url);
    closing.push(
      () => pool.end(),
      () => shared.close(),
    );
    await shared.whenReady();
    const reads = new ReadRouting(db.orm, pool, { afterWriteMs, shared });
    return { reads, read: readerOf(reads) };
  };

  it('sends a caller whose write another instance took to the primary, for the window, and everyone else to the replica', async () => {
    const a = await instance(1500);
    const b = await instance(1500);
    await a.reads.wrote('key:1');
    expect(await b.read('key:1')).toEqual(['primary:own_write']);
    expect(await a.read('key:1')).toEqual(['primary:own_write']);
    expect(await b.read('key:2')).toEqual(['replica:replica']);
    expect(await b.read(undefined)).toEqual(['replica:replica']);
    // The mark lapses with the window, on every instance.
    await waitFor(async () => (await b.read('key:1'))[0] === 'replica:replica', 10_000, 'the shared mark to lapse');
  });

  it('sends reads to the primary while the shared record cannot be asked', async () => {
    const b = await instance(5000);
    await redis.stop();
    expect(await b.read('key:3')).toEqual(['primary:writers_unavailable']);
    // A write is still remembered by the instance that took it.
    await b.reads.wrote('key:4');
    expect(await b.read('key:4')).toEqual(['primary:own_write']);
  });
});
