import { FixedWindowCounter, type Verdict } from './rate-limiter';

/** One limit: its name (part of every counter key), how many events a window allows, and the window. */
export interface Limit {
  readonly name: string;
  readonly max: number;
  readonly windowMs: number;
}

/** One event to count: under `limit`, for `key` (an IP, a key digest, a link reference). */
export interface Count {
  readonly limit: Limit;
  readonly key: string;
}

/**
 * Where the rate-limit counters live. Both stores count in fixed windows that start with a key's
 * first event, so a limit behaves the same whichever store holds it.
 *
 * `hit` counts the events in order and stops at the first one refused: an event a limit refuses
 * is not counted against the limits after it (a client over its per-IP card limit does not use up
 * the link's budget for everyone else). A remote store does the whole list in one round trip.
 * A store that cannot answer throws; the caller decides whether that lets the request through.
 */
export interface CounterStore {
  hit(counts: readonly Count[]): Promise<Verdict>;
  /** Whether `key` is over `limit` now, without counting anything. */
  check(limit: Limit, key: string): Promise<Verdict>;
  close(): Promise<void>;
}

const ALLOWED: Verdict = { allowed: true };

/**
 * The counters in this process's memory (the store without REDIS_URL): each instance counts on
 * its own, a check costs a map update, and nothing can fail.
 */
export class MemoryCounterStore implements CounterStore {
  private readonly counters = new Map<string, FixedWindowCounter>();

  constructor(private readonly now: () => number = Date.now) {}

  hit(counts: readonly Count[]): Promise<Verdict> {
    for (const { limit, key } of counts) {
      const verdict = this.counter(limit).hit(key);
      if (!verdict.allowed) return Promise.resolve(verdict);
    }
    return Promise.resolve(ALLOWED);
  }

  check(limit: Limit, key: string): Promise<Verdict> {
    return Promise.resolve(this.counter(limit).check(key));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private counter(limit: Limit): FixedWindowCounter {
    let counter = this.counters.get(limit.name);
    if (counter === undefined) {
      counter = new FixedWindowCounter(limit.max, limit.windowMs, 100_000, this.now);
      this.counters.set(limit.name, counter);
    }
    return counter;
  }
}
