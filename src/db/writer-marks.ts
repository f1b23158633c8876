import type { Redis } from 'ioredis';
import { closeRedisClient, REDIS_CONNECT_TIMEOUT_MS, redisClient } from './redis';

/**
 * Who wrote lately, shared by every instance (REDIS_URL): a caller whose write one instance
 * took has its next list reads sent to the primary by any instance, within the window.
 */
export interface WriterMarks {
  /** Records that `caller` wrote; the mark lapses after `ms`. */
  mark(caller: string, ms: number): Promise<void>;
  /** Whether `caller` has a mark that has not lapsed. */
  has(caller: string): Promise<boolean>;
  close(): Promise<void>;
}

const PREFIX = 'pgw:wrote:';

/** WriterMarks as Redis keys that expire with the window (SET … PX; EXISTS). */
export class RedisWriterMarks implements WriterMarks {
  private readonly client: Redis;

  constructor(url: string) {
    this.client = redisClient(url);
    // A failed command rejects its caller (who falls back safely); the connection's own errors need no other handling.
    this.client.on('error', () => undefined);
  }

  /** Resolves once connected, or after `ms` (a Redis down at start leaves reads on the primary until it is back). */
  whenReady(ms = REDIS_CONNECT_TIMEOUT_MS): Promise<void> {
    if (this.client.status === 'ready') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.client.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.client.once('ready', done);
    });
  }

  // Both fail at once while the connection is down (no queue, no wait): a read goes to the primary.
  async mark(caller: string, ms: number): Promise<void> {
    await this.client.set(PREFIX + caller, '1', 'PX', ms);
  }

  async has(caller: string): Promise<boolean> {
    return (await this.client.exists(PREFIX + caller)) === 1;
  }

  close(): Promise<void> {
    return closeRedisClient(this.client);
  }
}
