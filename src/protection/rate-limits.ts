import crypto from 'node:crypto';
import type { RateLimitConfig } from '../config';
import type { Count, CounterStore, Limit } from './counter-store';
import { FixedWindowCounter, type Verdict } from './rate-limiter';

/** What happened to a request whose counters could not be reached: let through (fail open) or refused (fail closed). */
export type StoreFailureOutcome = 'allowed' | 'refused';

/** Told of every request whose counters could not be reached. */
export type StoreFailureListener = (outcome: StoreFailureOutcome, error: unknown) => void;

/** A refusal for want of the counters: the client may try again in a few seconds. */
const UNAVAILABLE: Verdict = { allowed: false, retryAfterSeconds: 5, unavailable: true };
const ALLOWED: Verdict = { allowed: true };
const WINDOW_MS = 60_000;

interface NamedLimit extends Limit {
  /** True for a limit that must hold even without its counters: a request it covers is refused then. */
  readonly failClosed: boolean;
}

/**
 * The service's rate limits, all per minute, counted in one store (in memory per instance, or
 * Redis shared by all of them):
 * - `perKey`: requests per api-key that authenticated (counted under a hash of the key);
 * - `perIp`: requests per client IP that carry no valid key;
 * - `authFailures`: failed api-key or admin-token attempts per client IP;
 * - `cardPerLink` / `cardPerIp`: card attempts on the public payment-link page (card testing);
 * - `passwordResetsPerIp` (per minute) / `passwordResetsPerEmail` (per hour): requests for a
 *   password-reset email, which anyone may ask for: neither an address nor a mailbox is flooded.
 *
 * When the store cannot answer, the general limits let the request through (an outage of the
 * counters must not take the API down) and the card-attempt limits refuse it (card testing must
 * not become possible because a counter server is down). See docs/protection.md.
 */
export class RateLimits {
  readonly perKey: Limit;
  readonly perIp: Limit;
  readonly authFailures: Limit;
  readonly cardPerLink: Limit;
  readonly cardPerIp: Limit;
  readonly passwordResetsPerIp: Limit;
  readonly passwordResetsPerEmail: Limit;
  /**
   * Api-keys (by digest) that authenticated on this instance in their current window: they are
   * counted without being looked up first. Kept here whatever the store: it spares a lookup, it
   * decides no limit.
   */
  private readonly recentKeys: FixedWindowCounter;

  constructor(
    config: RateLimitConfig,
    readonly store: CounterStore,
    private readonly onStoreFailure: StoreFailureListener,
    now: () => number = Date.now,
  ) {
    const limit = (name: string, max: number, failClosed = false, windowMs = WINDOW_MS): NamedLimit => ({ name, max, windowMs, failClosed });
    this.perKey = limit('key', config.perKey);
    this.perIp = limit('ip', config.perIp);
    this.authFailures = limit('auth', config.authFailures);
    this.cardPerLink = limit('card-link', config.cardAttemptsPerLink, true);
    this.cardPerIp = limit('card-ip', config.cardAttemptsPerIp, true);
    this.passwordResetsPerIp = limit('reset-ip', config.passwordResetsPerIp);
    this.passwordResetsPerEmail = limit('reset-email', config.passwordResetsPerEmail, false, 3_600_000);
    this.recentKeys = new FixedWindowCounter(Number.MAX_SAFE_INTEGER, WINDOW_MS, 100_000, now);
  }

  /**
   * Counts the events in order and stops at the first refused (see CounterStore.hit). Without its
   * store: allowed, unless one of the events is under a limit that fails closed.
   */
  async count(counts: readonly Count[]): Promise<Verdict> {
    try {
      return await this.store.hit(counts);
    } catch (error) {
      const closed = counts.some((c) => (c.limit as NamedLimit).failClosed);
      this.onStoreFailure(closed ? 'refused' : 'allowed', error);
      return closed ? UNAVAILABLE : ALLOWED;
    }
  }

  /** Whether `key` is over `limit` now, without counting; allowed when the store cannot answer (only general limits are checked). */
  async check(limit: Limit, key: string): Promise<Verdict> {
    try {
      return await this.store.check(limit, key);
    } catch (error) {
      this.onStoreFailure('allowed', error);
      return ALLOWED;
    }
  }

  /** True when the key (by digest) authenticated on this instance within its current window. */
  knownKey(id: string): boolean {
    return this.recentKeys.has(id);
  }

  /** Notes that the key (by digest) authenticated. */
  rememberKey(id: string): void {
    this.recentKeys.hit(id);
  }

  /** What a key counts under: a digest, so the counters never hold a usable key (one-shot hash: under a microsecond). */
  static keyId(apiKey: string): string {
    return sha256(apiKey.trim());
  }
}

/** Node 20.12+ has the one-shot crypto.hash (about twice as fast); older releases hash the long way. */
const sha256: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text, 'base64') : (text) => crypto.createHash('sha256').update(text).digest('base64');
