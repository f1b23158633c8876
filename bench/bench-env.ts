/**
 * A fixed master key for benchmark databases only: services of one run (and of later runs on the
 * same BENCH_DATABASE_URL) must share it, since the service refuses a database whose secrets were
 * sealed under another key.
 */
const BENCH_MASTER_KEY = 'be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c4be4c';

/** The database of a benchmark service: BENCH_DATABASE_URL when set (a scratch PostgreSQL database), else the embedded one. */
export function benchDatabaseEnv(): Record<string, string> {
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  return { ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), MASTER_KEY: BENCH_MASTER_KEY };
}

export { freePort, scratchDatabase } from './scratch';
