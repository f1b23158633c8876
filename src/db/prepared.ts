import type { MikroORM } from '@mikro-orm/postgresql';

/** A statement prepared once per connection under its name and reused (PostgreSQL's extended protocol). */
export interface PreparedStatement {
  /** Unique per text: a changed text needs a new name (a version suffix). */
  name: string;
  text: string;
}

interface PgClient {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>;
}

interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<void>;
}

/**
 * Runs a named prepared statement on a connection of MikroORM's own pool (the pg driver
 * underneath): one round trip, planned once per connection, no query building, no identity
 * map. For the hot paths only; everything else goes through the entity manager. Rows come as
 * the driver gives them with MikroORM's type settings (timestamps as text: read them with
 * `orm.em.getPlatform().parseDate`, as MikroORM does).
 */
export async function runPrepared<R = Record<string, unknown>>(orm: MikroORM, statement: PreparedStatement, values: unknown[]): Promise<R[]> {
  const client = orm.em.getConnection().getKnex().client as unknown as KnexClient;
  const connection = await client.acquireConnection();
  try {
    const result = await connection.query({ name: statement.name, text: statement.text, values });
    return result.rows as R[];
  } finally {
    await client.releaseConnection(connection);
  }
}

/** A unique violation of the named constraint, as the pg driver reports it. */
export function isUniqueViolation(err: unknown, constraint: string): boolean {
  const e = err as { code?: unknown; constraint?: unknown };
  return e !== null && typeof e === 'object' && e.code === '23505' && e.constraint === constraint;
}
