import type { Service } from '../../src/bootstrap';

/** What a piece of work sent to PostgreSQL, counted at the pg driver the service's pool uses. */
export interface StatementCount {
  /** The service's own statements (BEGIN and COMMIT included), in the order they were sent. */
  statements: string[];
  /** Transactions: explicit BEGIN … COMMIT blocks, plus statements that write outside one (each its own transaction). */
  transactions: number;
  /** The sandbox processor's statements (its own table): in live mode that is a call to the acquirer, not our database. */
  processorStatements: string[];
  /**
   * Statements sent on another connection while one of the work's transactions was open: a
   * transaction that waits for a second pooled connection can wait for ever once transactions
   * hold the whole pool.
   */
  besideOpenTransaction: string[];
}

interface PgQueryable {
  query(...args: unknown[]): unknown;
}

const PROCESSOR_TABLE = /\bsandbox_authorization\b/;
const WRITES = /^\s*(insert|update|delete|with\b[\s\S]*\b(insert|update|delete)\b)/i;

/**
 * Runs `work` (one request to the in-process service) and counts every statement the process
 * sends through the pg driver meanwhile, by wrapping the driver's `Client.prototype.query` (the
 * driver MikroORM's pool was opened with, so ORM, knex and prepared statements alike are seen).
 * Nothing else may run against the service during `work`.
 */
export async function countStatements(service: Service, work: () => Promise<unknown>): Promise<StatementCount> {
  const knexClient = service.runtime.ctx.orm.em.getConnection().getKnex().client as unknown as { driver: { Client: { prototype: PgQueryable } } };
  const proto = knexClient.driver.Client.prototype;
  const original = proto.query;
  const result: StatementCount = { statements: [], transactions: 0, processorStatements: [], besideOpenTransaction: [] };
  const inTransaction = new WeakSet<object>();
  const open = new Set<object>();
  proto.query = function (this: object, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = (typeof first === 'string' ? first : (first?.text ?? '')).trim();
    if (PROCESSOR_TABLE.test(text)) result.processorStatements.push(text);
    else if (text) {
      if (open.size > (open.has(this) ? 1 : 0)) result.besideOpenTransaction.push(text);
      result.statements.push(text);
      if (/^begin\b/i.test(text)) {
        inTransaction.add(this);
        open.add(this);
        result.transactions += 1;
      } else if (/^(commit|rollback)\b/i.test(text)) {
        inTransaction.delete(this);
        open.delete(this);
      } else if (!inTransaction.has(this) && WRITES.test(text)) result.transactions += 1;
    }
    return original.apply(this, args);
  };
  try {
    await work();
  } finally {
    proto.query = original;
  }
  return result;
}
