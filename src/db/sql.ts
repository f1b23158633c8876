import type { MikroORM } from '@mikro-orm/postgresql';
import { runDescribedOnce } from './described-once';

/** A row as the pg driver gives it. */
export type Row = Record<string, any>;

/** A statement prepared once per connection under its name and reused (PostgreSQL's extended protocol). */
export interface PreparedStatement {
  /** Unique per text: a changed text needs a new name (a version suffix). */
  name: string;
  text: string;
}

/**
 * Runs SQL on a pooled connection of MikroORM's own pool (the pg driver underneath): one round
 * trip, no query building, no identity map. Either SQL written with `?` placeholders (numbered
 * once per distinct text), or a named prepared statement (`$n` placeholders, planned once per
 * connection). Rows come as the driver gives them with MikroORM's type settings (timestamps as
 * text: `EntityRowMapper` reads them as the entities would). For the hot paths and lists;
 * everything else goes through the entity manager.
 */
export type RunSql = <R = Row>(query: string | PreparedStatement, params: unknown[]) => Promise<R[]>;

interface PgClient {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: Row[] }>;
}

/** One statement on `connection`: a named one without describing its rows again (described-once.ts). */
function runOn(connection: PgClient, text: (sql: string) => string, query: string | PreparedStatement, params: unknown[]): Promise<Row[]> {
  if (typeof query !== 'string') return runDescribedOnce(connection as never, query, params);
  return connection.query({ text: text(query), values: params }).then((result) => result.rows);
}

interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<void>;
}

/** Where a runner takes its connections from: MikroORM's pool (the primary) or a plain pg pool (a read replica). */
export interface ConnectionSource {
  acquire(): Promise<PgClient>;
  release(connection: PgClient): void | Promise<void>;
}

/** The connections of a plain `pg` pool (`Pool` of the pg driver) as a ConnectionSource. */
export function poolSource(pool: { connect(): Promise<PgClient & { release(): void }> }): ConnectionSource {
  return {
    acquire: () => pool.connect(),
    release: (connection) => (connection as PgClient & { release(): void }).release(),
  };
}

/** The one way this code runs hand-written SQL (see RunSql): on MikroORM's pool, or on `source`. */
export function sqlRunner(from: MikroORM | ConnectionSource): RunSql {
  let source: ConnectionSource;
  if ('acquire' in from) source = from;
  else {
    const client = from.em.getConnection().getKnex().client as unknown as KnexClient;
    source = { acquire: () => client.acquireConnection(), release: (connection) => client.releaseConnection(connection) };
  }
  const texts = new Map<string, string>();
  const numbered = (sql: string): string => {
    let text = texts.get(sql);
    if (text === undefined) {
      text = numberPlaceholders(sql);
      // The statements are built from a fixed set of fragments: a bounded number of texts.
      if (texts.size < 1000) texts.set(sql, text);
    }
    return text;
  };
  return async <R>(query: string | PreparedStatement, params: unknown[]) => {
    const connection = await source.acquire();
    try {
      return (await runOn(connection, numbered, query, params)) as R[];
    } finally {
      await source.release(connection);
    }
  };
}

/** Runs `work` in one transaction (BEGIN … COMMIT) on one connection; any failure rolls it back and is thrown again. */
export type SqlTransaction = <T>(work: (run: RunSql) => Promise<T>) => Promise<T>;

/**
 * Transactions of hand-written SQL on MikroORM's pool (see RunSql): BEGIN, the statements `work`
 * runs (all on the one connection it holds), COMMIT; ROLLBACK when `work` or the COMMIT fails.
 * For the money path's plain SQL; everything else uses the entity manager's transactions.
 */
export function sqlTransactions(orm: MikroORM): SqlTransaction {
  const client = orm.em.getConnection().getKnex().client as unknown as KnexClient;
  return async <T>(work: (run: RunSql) => Promise<T>): Promise<T> => {
    const connection = await client.acquireConnection();
    // `?` placeholders numbered, as sqlRunner does (short texts only: the outbox's cache fills).
    const run = async <R>(query: string | PreparedStatement, params: unknown[]) => (await runOn(connection, numberPlaceholders, query, params)) as R[];
    try {
      await connection.query({ text: 'begin', values: [] });
      let result: T;
      try {
        result = await work(run as RunSql);
      } catch (err) {
        await connection.query({ text: 'rollback', values: [] }).catch(() => undefined);
        throw err;
      }
      await connection.query({ text: 'commit', values: [] });
      return result;
    } finally {
      await client.releaseConnection(connection);
    }
  };
}

/** `?` placeholders as PostgreSQL's `$1`, `$2`, … */
function numberPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${(n += 1)}`);
}

/** Runs a named prepared statement once (see RunSql); a service running many keeps a `sqlRunner`. */
export function runPrepared<R = Row>(orm: MikroORM, statement: PreparedStatement, values: unknown[]): Promise<R[]> {
  return sqlRunner(orm)<R>(statement, values);
}

/** PostgreSQL's deadlock_detected: the statement chosen as the victim wrote nothing (a guarded write then takes its locking way). */
export function isDeadlock(err: unknown): boolean {
  return err !== null && typeof err === 'object' && (err as { code?: unknown }).code === '40P01';
}

/** A unique violation of the named constraint, as the pg driver reports it. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return e !== null && typeof e === 'object' && e.code === '23505' && e.constraint === constraint;
}

/** SQL conditions with their `?` parameters. */
export class Conditions {
  readonly parts: string[] = [];
  readonly params: unknown[] = [];
  add(sql: string, ...params: unknown[]): this {
    this.parts.push(sql);
    this.params.push(...params);
    return this;
  }
  get sql(): string {
    return this.parts.join(' and ');
  }
}

/**
 * Up to this many matching rows a list's `totalCount` is exact (counted); beyond it, it is
 * PostgreSQL's estimate and `totalCountIsEstimate` is true (docs/performance.md, "Lists at scale").
 */
export const EXACT_COUNT_BOUND = 1_000;

export interface Counted {
  totalCount: number;
  totalCountIsEstimate: boolean;
}

/**
 * `select count(*)` of `selectOne` (a `select 1 from … where …`), counting at most
 * EXACT_COUNT_BOUND + 1 rows; beyond the bound, the planner's estimate of the rows (at least
 * the bound + 1), flagged as an estimate.
 */
export async function boundedCount(execute: (sql: string, params: unknown[]) => Promise<Row[]>, selectOne: string, params: unknown[]): Promise<Counted> {
  const [row] = await execute(`select count(*)::int as n from (${selectOne} limit ${EXACT_COUNT_BOUND + 1}) s`, params);
  return countedFrom(Number(row?.n ?? 0), execute, selectOne, params);
}

/** The count as `boundedCount` answers it, from `n` rows counted up to the bound: beyond it, the planner's estimate (one more statement). */
async function countedFrom(n: number, execute: (sql: string, params: unknown[]) => Promise<Row[]>, selectOne: string, params: unknown[]): Promise<Counted> {
  if (n <= EXACT_COUNT_BOUND) return { totalCount: n, totalCountIsEstimate: false };
  const [plan] = await execute(`explain (format json) ${selectOne}`, params);
  const planRows = Number((plan?.['QUERY PLAN'] as Array<{ Plan: { 'Plan Rows': number } }> | undefined)?.[0]?.Plan['Plan Rows'] ?? 0);
  return { totalCount: Math.max(EXACT_COUNT_BOUND + 1, Math.round(planRows)), totalCountIsEstimate: true };
}

/** The column of `pageAndCount`'s statement that carries the count (a name no table of ours has). */
const COUNT_COLUMN = 'pgw_bounded_count';

/**
 * A list page and its bounded count (as `boundedCount`) in one statement, one round trip: the
 * count's single row left-joined with the page, so an empty page still answers the count.
 * `page.sql` is the page's complete SELECT (its own ORDER BY and LIMIT); `order` orders the
 * joined rows again by the page's output columns (`p.…`), since a join keeps no order; `key`
 * is a page column never null in a page row. Beyond the bound, the estimate takes a second statement.
 */
export async function pageAndCount(
  execute: (sql: string, params: unknown[]) => Promise<Row[]>,
  page: { sql: string; params: unknown[]; order: string; key: string },
  count: { selectOne: string; params: unknown[] },
): Promise<{ rows: Row[] } & Counted> {
  const joined = await execute(
    `select p.*, c.n as ${COUNT_COLUMN} from (select count(*)::int as n from (${count.selectOne} limit ${EXACT_COUNT_BOUND + 1}) s) c
       left join (${page.sql}) p on true order by ${page.order}`,
    [...count.params, ...page.params],
  );
  const n = Number(joined[0]?.[COUNT_COLUMN] ?? 0);
  const rows = joined[0]?.[page.key] === null || joined[0]?.[page.key] === undefined ? [] : joined;
  return { rows, ...(await countedFrom(n, execute, count.selectOne, count.params)) };
}
