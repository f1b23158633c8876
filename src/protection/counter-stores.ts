import type { FastifyInstance } from 'fastify';
import type { Config } from '../config';
import { MemoryCounterStore, type CounterStore } from './counter-store';
import { RateLimits, type StoreFailureListener, type StoreFailureOutcome } from './rate-limits';
import { RedisCounterStore } from './redis-counter-store';

/** At most one log line per outcome in this time while the counters cannot be reached; the metric counts every request. */
const FAILURE_LOG_INTERVAL_MS = 10_000;

/**
 * The rate limits of this instance: counted in Redis when REDIS_URL is set (every instance
 * naming it shares the counters), else in memory. The Redis connection is awaited (briefly) when
 * the server starts and closed with it. Every failed call to the counters is
 * counted in `gateway_rate_limit_store_errors_total`, and logged as a `rate_limit.store_failed`
 * event (at most one line per outcome every 10 s, with the number of failed calls since the last).
 */
export function createRateLimits(app: FastifyInstance, config: Config): RateLimits {
  let store: CounterStore;
  if (config.redisUrl === undefined) {
    store = new MemoryCounterStore();
  } else {
    const redis = new RedisCounterStore(config.redisUrl, (state, error) => {
      if (state === 'ready') app.log.info({ event: 'rate_limit.store_ready' }, 'rate-limit counters connected (Redis)');
      else app.log.warn({ event: 'rate_limit.store_lost', error: error?.message }, 'rate-limit counters lost their Redis connection');
    });
    app.addHook('onReady', async () => {
      if (!(await redis.connected()))
        app.log.warn({ event: 'rate_limit.store_unreachable' }, 'Redis (REDIS_URL) does not answer yet: limits fail open, card attempts are refused');
    });
    store = redis;
  }
  app.addHook('onClose', () => store.close());
  return new RateLimits(config.rateLimit, store, failureReporter(app));
}

function failureReporter(app: FastifyInstance): StoreFailureListener {
  const unlogged: Record<StoreFailureOutcome, number> = { allowed: 0, refused: 0 };
  const loggedAt: Record<StoreFailureOutcome, number> = { allowed: -Infinity, refused: -Infinity };
  return (outcome, error) => {
    // Decorated after the protection is installed; present by the time a request is counted.
    if (app.hasDecorator('metrics')) app.metrics.rateLimitStoreErrors.inc({ outcome });
    unlogged[outcome] += 1;
    const now = Date.now();
    if (now - loggedAt[outcome] < FAILURE_LOG_INTERVAL_MS) return;
    app.log.warn(
      { event: 'rate_limit.store_failed', outcome, failures: unlogged[outcome], error: error instanceof Error ? error.message : String(error) },
      outcome === 'allowed' ? 'rate-limit counters unreachable: requests let through uncounted' : 'rate-limit counters unreachable: card attempts refused',
    );
    loggedAt[outcome] = now;
    unlogged[outcome] = 0;
  };
}
