import crypto from 'node:crypto';
import type { RateLimitConfig } from '../config';
import { FixedWindowCounter } from './rate-limiter';

/**
 * The service's rate limits, one counter each, all per minute and per instance:
 * - `perKey`: requests per api-key that authenticated (counted under a hash of the key);
 * - `perIp`: requests per client IP that carry no valid key;
 * - `authFailures`: failed api-key or admin-token attempts per client IP;
 * - `cardPerLink` / `cardPerIp`: card attempts on the public payment-link page (card testing);
 * - `passwordResetsPerIp` (per minute) / `passwordResetsPerEmail` (per hour): requests for a
 *   password-reset email, which anyone may ask for: neither an address nor a mailbox is flooded.
 */
export class RateLimits {
  readonly perKey: FixedWindowCounter;
  readonly perIp: FixedWindowCounter;
  readonly authFailures: FixedWindowCounter;
  readonly cardPerLink: FixedWindowCounter;
  readonly cardPerIp: FixedWindowCounter;
  readonly passwordResetsPerIp: FixedWindowCounter;
  readonly passwordResetsPerEmail: FixedWindowCounter;

  constructor(config: RateLimitConfig, now: () => number = Date.now) {
    const counter = (limit: number) => new FixedWindowCounter(limit, 60_000, 100_000, now);
    this.perKey = counter(config.perKey);
    this.perIp = counter(config.perIp);
    this.authFailures = counter(config.authFailures);
    this.cardPerLink = counter(config.cardAttemptsPerLink);
    this.cardPerIp = counter(config.cardAttemptsPerIp);
    this.passwordResetsPerIp = counter(config.passwordResetsPerIp);
    this.passwordResetsPerEmail = new FixedWindowCounter(config.passwordResetsPerEmail, 3_600_000, 100_000, now);
  }

  /** What a key counts under: a digest, so the counters never hold a usable key (one-shot hash: under a microsecond). */
  static keyId(apiKey: string): string {
    return sha256(apiKey.trim());
  }
}

/** Node 20.12+ has the one-shot crypto.hash (about twice as fast); older releases hash the long way. */
const sha256: (text: string) => string =
  typeof crypto.hash === 'function' ? (text) => crypto.hash('sha256', text, 'base64') : (text) => crypto.createHash('sha256').update(text).digest('base64');
