import type { Redis } from 'ioredis';
import { closeRedisClient, REDIS_CONNECT_TIMEOUT_MS, redisClient } from '../db/redis';
import type { Count, CounterStore, Limit } from './counter-store';
import { retryAfterSeconds, type Verdict } from './rate-limiter';

/** Every counter key starts with this, then the limit's name and the counted key: `pgw:rl:ip:203.0.113.7`. */
const COUNTER_KEY_PREFIX = 'pgw:rl:';

/**
 * Counts the keys in order (INCR, and PEXPIRE when a window begins), stopping at the first over
 * its limit: the milliseconds until that window ends, or -1 when every count was allowed. One
 * script, so one round trip and no other client between the increment and the expiry.
 * ARGV holds each key's limit and window (ms), in the order of KEYS.
 */
const HIT = `
for i = 1, #KEYS do
  local window = tonumber(ARGV[2 * i])
  local count = redis.call('INCR', KEYS[i])
  if count == 1 then redis.call('PEXPIRE', KEYS[i], window) end
  if count > tonumber(ARGV[2 * i - 1]) then
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 then
      redis.call('PEXPIRE', KEYS[i], window)
      ttl = window
    end
    return ttl
  end
end
return -1
`;

/** The milliseconds until the window of KEYS[1] ends when it is at or over ARGV[1] events, else -1. Counts nothing. */
const CHECK = `
local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count < tonumber(ARGV[1]) then return -1 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then return -1 end
return ttl
`;

interface CounterCommands {
  pgwRateHit(...keysThenArgs: (string | number)[]): Promise<number>;
  pgwRateCheck(key: string, max: number): Promise<number>;
}

/**
 * The counters in Redis (7 or later) or Valkey (8), shared by every instance that names the same
 * server: a limit holds for the whole deployment. Commands never wait for a connection: while
 * the server is unreachable they fail at once (no offline queue, no retry of a command), and the
 * client reconnects in the background, so an outage costs each request one failed call.
 */
export class RedisCounterStore implements CounterStore {
  private readonly client: Redis;
  private readonly commands: CounterCommands;

  constructor(url: string, onConnectionChange: (state: 'ready' | 'lost', error?: Error) => void) {
    // The shared options: a counter that takes over half a second lets the request go on without
    // it (the check sits in front of every request: an unreachable Redis costs milliseconds, not seconds).
    this.client = redisClient(url);
    this.client.defineCommand('pgwRateHit', { lua: HIT });
    this.client.defineCommand('pgwRateCheck', { numberOfKeys: 1, lua: CHECK });
    this.commands = this.client as unknown as CounterCommands;
    let up = false;
    this.client.on('ready', () => {
      up = true;
      onConnectionChange('ready');
    });
    // The client reports every failed reconnection: told once per outage.
    this.client.on('error', (error: Error) => {
      if (!up) return;
      up = false;
      onConnectionChange('lost', error);
    });
    this.client.on('end', () => {
      up = false;
    });
  }

  /** Resolves once connected, or after `timeoutMs` (the counters then fail until the server answers). */
  async connected(timeoutMs: number = REDIS_CONNECT_TIMEOUT_MS): Promise<boolean> {
    if (this.client.status === 'ready') return true;
    let timer: NodeJS.Timeout | undefined;
    let onReady: (() => void) | undefined;
    const ready = await Promise.race([
      new Promise<boolean>((resolve) => {
        onReady = () => resolve(true);
        this.client.once('ready', onReady);
      }),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (onReady) this.client.removeListener('ready', onReady);
    return ready;
  }

  async hit(counts: readonly Count[]): Promise<Verdict> {
    if (counts.length === 0) return { allowed: true };
    const keys = counts.map((c) => counterKey(c.limit, c.key));
    const args = counts.flatMap((c) => [c.limit.max, c.limit.windowMs]);
    const ms = await this.commands.pgwRateHit(keys.length, ...keys, ...args);
    return ms < 0 ? { allowed: true } : { allowed: false, retryAfterSeconds: retryAfterSeconds(ms) };
  }

  async check(limit: Limit, key: string): Promise<Verdict> {
    const ms = await this.commands.pgwRateCheck(counterKey(limit, key), limit.max);
    return ms < 0 ? { allowed: true } : { allowed: false, retryAfterSeconds: retryAfterSeconds(ms) };
  }

  close(): Promise<void> {
    return closeRedisClient(this.client);
  }
}

function counterKey(limit: Limit, key: string): string {
  return `${COUNTER_KEY_PREFIX}${limit.name}:${key}`;
}
