/** Node.js socket errors of a connection to the database server. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** PostgreSQL SQLSTATEs of a server that is going away or refusing connections (class 08, 57P01–57P03, 53300). */
const SQLSTATE = /^(08...|57P0[123]|53300)$/;
/**
 * What the pg driver and the pool say when a connection is lost or none can be had; and what
 * the query builder says of a statement sent on a transaction that its lost connection ended.
 */
const MESSAGES =
  /Transaction query already complete|Connection terminated|Connection ended unexpectedly|Timeout acquiring a connection|Client has encountered a connection error|connect ECONNREFUSED|read ECONNRESET|the database system is (starting up|shutting down)|terminating connection due to administrator command/i;

/**
 * True when an error means the database cannot be reached right now (a lost connection,
 * refused connections, a pool that cannot get one), as opposed to a fault of the query or of
 * the code: adapters answer it with 503 (try again later), not 500. Looks through the
 * wrappers (the ORM's, GraphQL's) to the cause.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && typeof current === 'object'; depth++) {
    const e = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown; originalError?: unknown; thrownValue?: unknown };
    if (typeof e.code === 'string' && (SOCKET_CODES.has(e.code) || SQLSTATE.test(e.code))) return true;
    if (e.name === 'KnexTimeoutError' || (current as object).constructor?.name === 'ConnectionException') return true;
    if (typeof e.message === 'string' && MESSAGES.test(e.message)) return true;
    // graphql-js wraps a value that is no Error of its own realm as `thrownValue`.
    current = e.originalError ?? e.thrownValue ?? e.cause;
  }
  return false;
}

export const DATABASE_UNAVAILABLE_MESSAGE = 'The service is temporarily unavailable, please try again later.';
