import type { AppContext } from '../app-context';
import type { Metrics } from './metrics';
import { within } from '../shared/time';

/** How long one reading of the webhook backlog serves scrapes (several Prometheis, several gauges). */
export const BACKLOG_CACHE_MS = 5_000;
/** A backlog query that takes longer than this is given up; the scrape answers without it. */
const BACKLOG_QUERY_TIMEOUT_MS = 1_000;

interface Backlog {
  due: number;
  pending: number;
  dead: number;
  /** Seconds the oldest due delivery has been waiting; 0 when none is due. */
  oldestDueSeconds: number;
}

/**
 * A value read at most once per `ttlMs`, shared by every reader meanwhile (and by concurrent
 * readers while it is being read): one query per interval, whatever the number of scrapes
 * and gauges.
 */
export class CachedReading<T> {
  private value: T | undefined;
  private readAt = 0;
  private reading: Promise<T | undefined> | undefined;

  constructor(
    private readonly ttlMs: number,
    private readonly read: () => Promise<T>,
  ) {}

  /** The value read within ttlMs, or a new reading; undefined when reading failed. */
  get(): Promise<T | undefined> {
    if (this.value !== undefined && Date.now() - this.readAt < this.ttlMs) return Promise.resolve(this.value);
    this.reading ??= this.read()
      .then(
        (value) => {
          this.value = value;
          this.readAt = Date.now();
          return value;
        },
        () => {
          this.value = undefined;
          return undefined;
        },
      )
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }
}

/** The part of a knex (tarn) pool the gauges read. */
interface PoolLike {
  max: number;
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
}

function poolOf(ctx: AppContext): PoolLike | undefined {
  const connection = ctx.orm.em.getConnection() as unknown as { getKnex?: () => { client?: { pool?: PoolLike } } };
  return connection.getKnex?.().client?.pool;
}

/**
 * Gauges read when scraped: the webhook backlog (one indexed query per BACKLOG_CACHE_MS, not
 * one per scrape or per series), live GraphQL subscriptions of this instance, and the
 * database pool.
 */
export function registerServiceGauges(metrics: Metrics, ctx: AppContext): void {
  const backlog = new CachedReading<Backlog>(BACKLOG_CACHE_MS, async () => {
    const now = ctx.clock.now();
    // The (state, next_attempt_at) index serves the pending rows; dead ones are counted by state.
    const [row] = await within(
      ctx.orm.em.getConnection().execute(
        `select count(*) filter (where state = 'pending' and next_attempt_at <= ?) as due,
                count(*) filter (where state = 'pending') as pending,
                count(*) filter (where state = 'dead') as dead,
                min(next_attempt_at) filter (where state = 'pending' and next_attempt_at <= ?) as oldest_due
           from webhook_delivery where state in ('pending', 'dead')`,
        [now, now],
      ),
      BACKLOG_QUERY_TIMEOUT_MS,
      'the webhook backlog query',
    );
    const oldest = row?.oldest_due ? new Date(row.oldest_due).getTime() : null;
    return {
      due: Number(row?.due ?? 0),
      pending: Number(row?.pending ?? 0),
      dead: Number(row?.dead ?? 0),
      oldestDueSeconds: oldest === null ? 0 : Math.max(0, (now.getTime() - oldest) / 1000),
    };
  });
  const fromBacklog = (pick: (b: Backlog) => number) => async (gauge: { set(v: number): void; reset(): void }) => {
    const b = await backlog.get();
    // Unknown (database unreachable): no sample rather than a made-up zero.
    if (b === undefined) gauge.reset();
    else gauge.set(pick(b));
  };
  metrics.addGauge(
    'webhook_backlog_deliveries',
    'Webhook deliveries due now and not yet attempted (all instances).',
    [],
    fromBacklog((b) => b.due),
  );
  metrics.addGauge(
    'webhook_pending_deliveries',
    'Webhook deliveries not yet delivered nor given up, due or scheduled later (all instances).',
    [],
    fromBacklog((b) => b.pending),
  );
  metrics.addGauge(
    'webhook_dead_deliveries',
    'Webhook deliveries given up after their last attempt (all instances).',
    [],
    fromBacklog((b) => b.dead),
  );
  metrics.addGauge(
    'webhook_oldest_due_seconds',
    'How long the oldest due webhook delivery has been waiting (0: none is due).',
    [],
    fromBacklog((b) => b.oldestDueSeconds),
  );

  metrics.addGauge('graphql_subscriptions', 'Live GraphQL subscriptions (orderStatusChanged) on this instance.', [], (gauge) => {
    gauge.set(ctx.services.orderStatusBus.totalSubscribers());
  });

  metrics.addGauge(
    'db_pool_connections',
    'Database pool of this instance: connections in use, idle, and requests waiting for one.',
    ['state'] as const,
    (gauge) => {
      const pool = poolOf(ctx);
      if (!pool) return;
      gauge.set({ state: 'used' }, pool.numUsed());
      gauge.set({ state: 'free' }, pool.numFree());
      gauge.set({ state: 'pending_acquires' }, pool.numPendingAcquires());
      gauge.set({ state: 'pending_creates' }, pool.numPendingCreates());
    },
  );
  metrics.addGauge('db_pool_max_connections', 'Largest size of the database pool of this instance.', [], (gauge) => {
    const pool = poolOf(ctx);
    if (pool) gauge.set(pool.max);
  });
}
