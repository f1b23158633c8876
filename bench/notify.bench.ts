import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import { loadConfig } from '../src/config';
import { openRuntime } from '../src/bootstrap';
import { EVENTS_CHANNEL } from '../src/events/event-fanout';
import { encodeNotification } from '../src/events/event-notification';
import { webhookDestination } from '../src/merchants/webhook-url';
import { benchDatabaseEnv, scratchDatabase } from './bench-env';
import { formatCount, percentile, type BenchSection } from './report';

/** Settlements committing at once: one connection each. */
const CONCURRENCY = 32;
/** Instances listening on the channel (LISTEN connections draining what NOTIFY sends). */
const LISTENERS = 3;
/** Rounds of each variant, interleaved (with, without, with, …) so that the machine's load drifts over both alike. */
const ROUNDS = 3;

/**
 * PostgreSQL commit throughput of settlement-shaped transactions, 32 at once, with and without
 * the NOTIFY the outbox sends at commit when PostgreSQL carries the events (without REDIS_URL).
 * With REDIS_URL the outbox sends none (the fan-out publishes to Redis after commit, outside the
 * transaction): the "without" variant is that path's database side. Each transaction is what a
 * settlement writes about its event: the order's sequence number, then the outbox statement
 * (event, delivery and, in one variant, `pg_notify`), on 32 orders of their own (no row is
 * shared, so only the commit path can serialise them). Three LISTEN connections (three
 * instances) are open in both variants.
 */
export async function runNotifyBench(): Promise<BenchSection> {
  const name = 'notify: commit throughput with and without NOTIFY';
  const serverUrl = process.env.BENCH_DATABASE_URL;
  if (!serverUrl) return { name, lines: ['skipped: needs a PostgreSQL server: set BENCH_DATABASE_URL'] };
  const phaseMs = Math.max(1000, Number(process.env.BENCH_DURATION_MS ?? 5000));
  const scratch = await scratchDatabase(serverUrl, 'notify');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-notify-'));
  const listeners: Client[] = [];
  let pool: Pool | undefined;
  try {
    const orders = await createOrders(scratch.url, dataDir);
    let heard = 0;
    for (let i = 0; i < LISTENERS; i += 1) {
      const client = new Client({ connectionString: scratch.url });
      await client.connect();
      client.on('notification', () => (heard += 1));
      client.on('error', () => undefined);
      await client.query(`listen "${EVENTS_CHANNEL}"`);
      listeners.push(client);
    }
    pool = new Pool({ connectionString: scratch.url, max: CONCURRENCY });
    // An idle connection ended by the server (the scratch database dropped) is no failure of the bench.
    pool.on('error', () => undefined);
    // Warm-up: every connection opened, both statements planned.
    await runPhase(pool, orders, true, 500);
    await runPhase(pool, orders, false, 500);
    const results: Record<'with' | 'without' | 'unheard', PhaseResult[]> = { with: [], without: [], unheard: [] };
    const listen = (sql: string) => Promise.all(listeners.map((c) => c.query(sql)));
    for (let round = 0; round < ROUNDS; round += 1) {
      results.with.push(await runPhase(pool, orders, true, phaseMs));
      results.without.push(await runPhase(pool, orders, false, phaseMs));
      // The commit-time cost of NOTIFY alone, without the listeners' work of reading what it sends.
      await listen('unlisten *');
      results.unheard.push(await runPhase(pool, orders, true, phaseMs));
      await listen(`listen "${EVENTS_CHANNEL}"`);
    }
    const summary = (phases: PhaseResult[]) => {
      const rates = phases.map((p) => (p.commits * 1000) / p.elapsedMs).sort((a, b) => a - b);
      const latencies = phases.flatMap((p) => p.latencies);
      return {
        rates,
        median: rates[Math.floor(rates.length / 2)]!,
        p50: percentile(latencies, 50),
        p99: percentile(latencies, 99),
        errors: phases.reduce((s, p) => s + p.errors, 0),
      };
    };
    const withNotify = summary(results.with);
    const without = summary(results.without);
    const unheard = summary(results.unheard);
    const load = os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' / ');
    const line = (label: string, s: ReturnType<typeof summary>) =>
      `  ${label}: ${formatCount(s.median)} commits/s (median of ${ROUNDS} rounds: ${s.rates.map((r) => formatCount(r)).join(', ')}), commit latency p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, ${s.errors} errors`;
    return {
      name,
      lines: [
        `${CONCURRENCY} concurrent settlement transactions on ${CONCURRENCY} orders, ${LISTENERS} LISTEN connections open, ${ROUNDS} interleaved rounds of ${phaseMs / 1000} s each`,
        line('with NOTIFY (PostgreSQL carries events)   ', withNotify),
        line('without NOTIFY (REDIS_URL: Redis carries)', without),
        line('with NOTIFY, nobody listening             ', unheard),
        `  with / without: ${(withNotify.median / without.median).toFixed(2)}× throughput, p99 ${(withNotify.p99 / without.p99).toFixed(2)}×; ` +
          `nobody listening / without: ${(unheard.median / without.median).toFixed(2)}×; notifications heard: ${formatCount(heard)}; load average at the end ${load}`,
      ],
    };
  } finally {
    await pool?.end();
    await Promise.all(listeners.map((c) => c.end().catch(() => undefined)));
    fs.rmSync(dataDir, { recursive: true, force: true });
    await scratch.drop();
  }
}

interface BenchOrder {
  id: number;
  environmentId: number;
  reference: string;
}

interface PhaseResult {
  commits: number;
  errors: number;
  elapsedMs: number;
  latencies: number[];
}

/** One merchant with a webhook URL (so each event writes its delivery) and one order per connection, made by the domain services. */
async function createOrders(url: string, dataDir: string): Promise<BenchOrder[]> {
  const runtime = await openRuntime(
    loadConfig({ ...benchDatabaseEnv(), DATABASE_URL: url, DATA_DIR: dataDir, LOG_LEVEL: 'silent', DECRYPT_THREADS: '0', ENCRYPTION_KEY_BITS: '2048' }),
    { migrate: true },
  );
  try {
    const { merchants, auth, orders } = runtime.ctx.services;
    const merchant = await merchants.createMerchant({
      name: 'Bench Notify',
      country: 'NG',
      supportEmail: 'notify@bench.test',
      keyBits: 2048,
      webhookUrl: 'https://hooks.bench.test/notify',
    });
    const tenant = await auth.authenticate(merchant.keys.test.privateKey);
    const made: BenchOrder[] = [];
    for (let i = 0; i < CONCURRENCY; i += 1) {
      const reference = `NOTIFY-${Date.now().toString(36)}-${i}`;
      await orders.create(tenant, {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada${i}@bench.test` },
        order: { amount: '1500.00', reference, description: 'Notify bench', currency: 'NGN' },
        payment: { redirectUrl: 'https://shop.bench.test/back' },
      });
      const [row] = await runtime.ctx.orm.em.getConnection().execute('select id from checkout_order where reference = ?', [reference]);
      made.push({ id: Number(row.id), environmentId: tenant.environmentId, reference });
    }
    return made;
  } finally {
    await runtime.close();
  }
}

/** Each connection commits settlement transactions on its own order, back to back, for `ms`. */
async function runPhase(pool: Pool, orders: BenchOrder[], notify: boolean, ms: number): Promise<PhaseResult> {
  const result: PhaseResult = { commits: 0, errors: 0, elapsedMs: 0, latencies: [] };
  const url = 'https://hooks.bench.test/notify';
  const destination = webhookDestination(url);
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    orders.map(async (order) => {
      const client = await pool.connect();
      try {
        while (performance.now() < end) {
          const t0 = performance.now();
          try {
            await client.query('begin');
            const { rows } = await client.query<{ event_sequence: number }>(
              'update checkout_order set event_sequence = event_sequence + 1, updated_at = now() where id = $1 returning event_sequence',
              [order.id],
            );
            const sequence = rows[0]!.event_sequence;
            const eventId = randomUUID();
            const change = { eventId, environmentId: order.environmentId, reference: order.reference, statusId: 5, status: 'Successful', sequence };
            const payload = JSON.stringify({
              notify: 'transaction',
              notifyType: 'successful',
              eventId,
              sequence,
              data: { orderReference: order.reference, statusId: 5 },
            });
            const params: unknown[] = [eventId, order.environmentId, order.id, sequence, payload, url, destination];
            // The outbox's statement (outbox.service.ts), with or without its NOTIFY.
            await client.query(
              `with event as (
                 insert into outbox_event (id, environment_id, order_id, notify, notify_type, sequence, payload, created_at)
                 values ($1, $2, $3, 'transaction', 'successful', $4, $5::json, now()) returning id
               ), delivery as (
                 insert into webhook_delivery (event_id, url, destination, next_attempt_at) select id, $6, $7, now() from event
               )
               select 1${notify ? ', pg_notify($8, $9)' : ''}`,
              notify ? [...params, EVENTS_CHANNEL, encodeNotification({ kind: 'order', change, delivery: true })] : params,
            );
            await client.query('commit');
            result.commits += 1;
            result.latencies.push(performance.now() - t0);
          } catch {
            result.errors += 1;
            await client.query('rollback').catch(() => undefined);
          }
        }
      } finally {
        client.release();
      }
    }),
  );
  result.elapsedMs = performance.now() - start;
  return result;
}
