/** ISO 8601 without a zone designator, in UTC, as the legacy interface writes timestamps. */
export function formatTimestamp(date: Date | null | undefined): string | null {
  if (!date) return null;
  return date.toISOString().slice(0, -1);
}

const FIRST_INSTANT = new Date('0001-01-01T00:00:00.000Z').getTime();
const LAST_INSTANT = new Date('9999-12-31T23:59:59.999Z').getTime();

/**
 * A date a query may compare with: a real instant between the years 1 and 9999. Outside that
 * range (year 0, year 275760) the database cannot represent it; it is the caller's mistake,
 * answered as a validation error rather than a fault.
 */
export function isQueryableDate(date: Date | null | undefined): boolean {
  if (!date) return true;
  const t = date.getTime();
  return Number.isFinite(t) && t >= FIRST_INSTANT && t <= LAST_INSTANT;
}

/**
 * Resolves to the value, or rejects once `ms` have passed (the work itself goes on: a query is
 * not cancelled, its answer is only no longer waited for).
 */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    timer.unref();
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
