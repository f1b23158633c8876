import { Redis, type RedisOptions } from 'ioredis';

/** How long a connection to Redis may take before it counts as failed (and is retried in the background). */
export const REDIS_CONNECT_TIMEOUT_MS = 2000;

/**
 * A client of the Redis (7 or later) or Valkey (8) named by REDIS_URL, with the options every
 * client of the service shares (the rate-limit counters, the event publisher and subscriber):
 * a command never waits for a connection unless `overrides` says so (no offline queue, no
 * retry of a command), a command that takes longer than half a second fails, and a lost
 * connection is re-made in the background for ever, at most every 2 s. Each caller holds its
 * own connection (a subscribing connection can do nothing else).
 */
export function redisClient(url: string, overrides: RedisOptions = {}): Redis {
  return new Redis(url, {
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: 500,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    // Closing: a connection that does not end at once is destroyed (a lost one never reports its end).
    disconnectTimeout: 100,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
    ...overrides,
  });
}

/** Closes a client: QUIT when connected (commands sent before it are answered), else at once. */
export async function closeRedisClient(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    await client.quit().catch(() => client.disconnect());
  } else {
    client.disconnect();
  }
}
