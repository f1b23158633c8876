import { Pool, TypeOverrides } from 'pg';
import type { MikroORM } from '@mikro-orm/postgresql';
import { poolSource, sqlRunner, type RunSql } from './sql';
import { isDatabaseUnavailable } from './unavailable';
import { Listeners } from '../shared/listeners';
import type { WriterMarks } from './writer-marks';

/**
 * Why a read went where it went: the replica; the primary because the caller wrote lately,
 * because the replica failed, or because the shared record of writers (Redis) could not be asked.
 */
export type ReadReason = 'replica' | 'own_write' | 'replica_unavailable' | 'writers_unavailable';

export interface ReadNotice {
  server: 'replica' | 'primary';
  reason: ReadReason;
  /** Set on the read that found the replica failing (once per outage): what it failed with. */
  error?: unknown;
}

/** After the replica fails, reads go to the primary for this long before the replica is tried again. */
export const REPLICA_RETRY_MS = 5_000;
/** Callers remembered as recent writers, at most (a bound on this instance's memory). */
const MAX_WRITERS = 100_000;

/**
 * The statement of a standby that had to cancel it for the WAL it replays (SQLSTATE 40001,
 * "canceling statement due to conflict with recovery"): the primary answers it instead.
 */
function isRecoveryConflict(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  return e !== null && typeof e === 'object' && e.code === '40001' && typeof e.message === 'string' && /conflict with recovery/i.test(e.message);
}

/**
 * A pool of plain pg connections to DATABASE_READ_URL, parsing values as MikroORM's pool does
 * (timestamps as text: EntityRowMapper reads rows of either pool alike).
 */
export function openReplicaPool(url: string, size: number): Pool {
  const types = new TypeOverrides();
  for (const oid of [1082, 1114, 1184, 1186]) types.setTypeParser(oid, (text: string) => text); // date, timestamp, timestamptz, interval
  const pool = new Pool({ connectionString: url, max: size, connectionTimeoutMillis: 10_000, types });
  // An idle connection the replica drops (restart, failover) must not take the process down; the next read finds out.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * Where read-only list paths (order and link lists, the dashboard summary, timelines, the audit
 * log, webhook deliveries) run their SQL: the read replica when there is one, else the primary.
 * A caller that wrote within `afterWriteMs` reads from the primary (it must see its own write;
 * the replica may not have replayed it yet), and so does every caller while the replica fails
 * (for REPLICA_RETRY_MS after each failure). With REDIS_URL the record of writers is shared by
 * every instance (WriterMarks), so a write taken by one routes the caller's reads on all.
 * Writes, reads in transactions, reads that decide a write and reads right after paying never
 * come here: they use the primary (MikroORM).
 * docs/operations.md, "A read replica", says why a time window and not the WAL position.
 */
export class ReadRouting {
  private readonly primary: RunSql;
  private readonly replica: RunSql | undefined;
  /** Caller → when the window of its last write ends (epoch ms), oldest write first. */
  private readonly writers = new Map<string, number>();
  /** A writer whose window had not ended was forgotten (the map was full): until then every caller reads from the primary. */
  private forgottenUntil = 0;
  private replicaDownUntil = 0;
  private readonly listeners = new Listeners<ReadNotice>();

  constructor(
    orm: MikroORM,
    replica: Pool | null,
    private readonly options: {
      afterWriteMs: number;
      now?: () => number;
      maxWriters?: number;
      /** Writers recorded for every instance (REDIS_URL): a write taken by one routes the caller's reads on all. */
      shared?: WriterMarks;
    } = { afterWriteMs: 0 },
  ) {
    this.primary = sqlRunner(orm);
    if (replica) {
      const run = sqlRunner(poolSource(replica));
      this.replica = (query, params) => this.onReplica(run, query, params);
    }
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Hears where each routed statement ran (metrics, logs); returns the unsubscribe. */
  onRead(listener: (notice: ReadNotice) => void): () => void {
    return this.listeners.add(listener);
  }

  private notify(notice: ReadNotice): void {
    this.listeners.emit(notice);
  }

  /** The runner of a list read by `caller` (undefined: a caller without identity, which never wrote). */
  for(caller: string | undefined): RunSql {
    const replica = this.replica;
    if (!replica) return this.primary;
    if (this.wroteLately(caller)) return this.onPrimary('own_write');
    const shared = this.options.shared;
    if (!shared || caller === undefined || this.options.afterWriteMs === 0) return replica;
    // Its write may have been taken by another instance: the shared record says. When it cannot
    // be asked, the primary answers (a caller must see its own write; the replica may trail).
    return async (query, params) => {
      const wrote = await shared.has(caller).catch(() => undefined);
      if (wrote === false) return replica(query, params);
      return this.onPrimary(wrote ? 'own_write' : 'writers_unavailable')(query, params);
    };
  }

  private onPrimary(reason: ReadReason): RunSql {
    return (query, params) => {
      this.notify({ server: 'primary', reason });
      return this.primary(query, params);
    };
  }

  /**
   * Whether a caller's writes change where its reads go: only with a replica and a window after
   * writes. Without, `wrote` does nothing and adapters need not report writes at all (no hook per request).
   */
  get tracksWriters(): boolean {
    return this.replica !== undefined && this.options.afterWriteMs > 0;
  }

  /**
   * Records that `caller` has just written: its reads go to the primary for the window, on every
   * instance when the record is shared (resolves once it is; a failure to share is left to the
   * readers, who go to the primary while they cannot ask).
   */
  async wrote(caller: string | undefined): Promise<void> {
    if (!this.replica || caller === undefined || this.options.afterWriteMs === 0) return;
    const shared = this.options.shared?.mark(caller, this.options.afterWriteMs).catch(() => undefined);
    const now = this.now();
    // Re-inserted, so that the map stays in the order of the writes (the oldest first).
    this.writers.delete(caller);
    this.writers.set(caller, now + this.options.afterWriteMs);
    const max = this.options.maxWriters ?? MAX_WRITERS;
    for (const [oldest, until] of this.writers) {
      if (this.writers.size <= max && until > now) break;
      this.writers.delete(oldest);
      if (until > now) this.forgottenUntil = Math.max(this.forgottenUntil, until);
    }
    await shared;
  }

  private wroteLately(caller: string | undefined): boolean {
    const now = this.now();
    if (now < this.forgottenUntil) return true;
    if (caller === undefined) return false;
    const until = this.writers.get(caller);
    if (until === undefined) return false;
    if (until > now) return true;
    this.writers.delete(caller);
    return false;
  }

  private async onReplica<R>(run: RunSql, query: Parameters<RunSql>[0], params: unknown[]): Promise<R[]> {
    if (this.now() < this.replicaDownUntil) {
      this.notify({ server: 'primary', reason: 'replica_unavailable' });
      return this.primary<R>(query, params);
    }
    try {
      const rows = await run<R>(query, params);
      this.notify({ server: 'replica', reason: 'replica' });
      return rows;
    } catch (error) {
      const unavailable = isDatabaseUnavailable(error);
      if (!unavailable && !isRecoveryConflict(error)) throw error;
      // A conflict is one statement's; an unreachable replica is left alone for a while (and logged once).
      const first = unavailable && this.now() >= this.replicaDownUntil;
      if (unavailable) this.replicaDownUntil = this.now() + REPLICA_RETRY_MS;
      this.notify({ server: 'primary', reason: 'replica_unavailable', ...(first ? { error } : {}) });
      return this.primary<R>(query, params);
    }
  }
}
