/**
 * Outcome of counting one event: allowed, or refused with the seconds until the window ends.
 * `unavailable`: refused because the shared counters could not be reached (a limit that fails closed).
 */
export type Verdict = { allowed: true } | { allowed: false; retryAfterSeconds: number; unavailable?: true };

const ALLOWED: Verdict = { allowed: true };

interface Window {
  count: number;
  endsAt: number;
}

/**
 * Counts events per key in fixed windows that start at a key's first event. In memory, per
 * instance: a check is a Map lookup and an increment (well under a microsecond), which is what
 * a limit on the hot path of every request can afford. The map is bounded: expired windows are
 * swept as time passes, and when `maxKeys` live keys exist the oldest window is dropped, so a
 * flood of distinct keys costs a fixed amount of memory and at worst forgets the oldest counter.
 */
export class FixedWindowCounter {
  private readonly windows = new Map<string, Window>();
  private nextSweepAt = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number = 60_000,
    private readonly maxKeys: number = 100_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one event for `key`; refused once more than `limit` events fall in the key's window. */
  hit(key: string): Verdict {
    const now = this.now();
    if (now >= this.nextSweepAt) this.sweep(now);
    let w = this.windows.get(key);
    if (w === undefined || w.endsAt <= now) {
      if (w !== undefined) this.windows.delete(key);
      else if (this.windows.size >= this.maxKeys) this.dropOldest();
      w = { count: 0, endsAt: now + this.windowMs };
      // Re-inserted so the Map's order stays the order in which windows began.
      this.windows.set(key, w);
    }
    w.count += 1;
    return w.count <= this.limit ? ALLOWED : { allowed: false, retryAfterSeconds: retryAfterSeconds(w.endsAt - now) };
  }

  /** Whether `key` is over its limit now, without counting anything. */
  check(key: string): Verdict {
    const now = this.now();
    const w = this.windows.get(key);
    if (w === undefined || w.endsAt <= now || w.count < this.limit) return ALLOWED;
    return { allowed: false, retryAfterSeconds: retryAfterSeconds(w.endsAt - now) };
  }

  /** True while `key` has a live window (it was counted within the last `windowMs`). */
  has(key: string): boolean {
    const w = this.windows.get(key);
    return w !== undefined && w.endsAt > this.now();
  }

  get size(): number {
    return this.windows.size;
  }

  private sweep(now: number): void {
    // Windows sit in the order they began, so expired ones are at the front.
    for (const [key, w] of this.windows) {
      if (w.endsAt > now) break;
      this.windows.delete(key);
    }
    this.nextSweepAt = now + Math.min(this.windowMs, 1000);
  }

  private dropOldest(): void {
    const oldest = this.windows.keys().next();
    if (!oldest.done) this.windows.delete(oldest.value);
  }
}

/** Whole seconds until a window that ends in `ms` milliseconds is over (at least 1). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
