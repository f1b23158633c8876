import type { EntityManager } from '@mikro-orm/postgresql';
import type { Mailer } from '../mail/mailer';
import { PollLoop } from '../shared/poll-loop';
import type { ClaimedEmail, EmailOutbox } from './email-outbox';

/** Longer than the SMTP transport's own timeouts (connection, greeting, idle socket) taken together. */
export const EMAIL_LEASE_MS = 120_000;
const BATCH = 10;

export interface EmailSenderOptions {
  /** Delays between attempts; one attempt more than delays, then the email is given up. */
  retryDelaysMs: number[];
  /** How often an idle sender looks for emails other instances queued (or left behind); 0: no loop. */
  pollIntervalMs: number;
}

/** What the sender tells its owner, after the row says so. */
export interface EmailSenderHooks {
  sent(email: ClaimedEmail): void;
  retrying(email: ClaimedEmail, reason: string): void;
  /** Runs in the transaction that marks the email failed (once per email). */
  failed(em: EntityManager, email: ClaimedEmail, reason: string): Promise<void>;
  fault(err: unknown): void;
}

/**
 * Sends the queued emails: leases due rows, hands each to the mailer, marks it sent, or due
 * again after the next delay, or failed once the attempts are spent. At least once: a crash after
 * the server accepted an email and before it is marked sent sends it again when the lease ends.
 * Emails queued by this instance are sent at once (wake()); others' on the poll.
 */
export class EmailSender {
  private readonly loop: PollLoop;
  private nextPollAt = 0;
  private nextRetryAt = Number.POSITIVE_INFINITY;
  /** Passes in progress (the loop's and drain()'s). */
  private readonly inflight = new Set<Promise<number>>();
  /**
   * Queued here and not yet settled, with when: sent first, without waiting for the poll. An id
   * whose transaction rolled back, or that another instance took, is forgotten after a lease's
   * time (the poll covers whatever is left).
   */
  private readonly mine = new Map<string, number>();

  constructor(
    private readonly outbox: EmailOutbox,
    private readonly mailer: Mailer,
    private readonly options: EmailSenderOptions,
    private readonly hooks: EmailSenderHooks,
  ) {
    this.loop = new PollLoop({
      round: () => this.round(),
      idleMs: () => Math.min(this.nextPollAt, this.nextRetryAt) - Date.now(),
      backoffBaseMs: options.pollIntervalMs,
      fault: (err) => this.hooks.fault(err),
    });
  }

  get started(): boolean {
    return this.loop.started;
  }

  /** An email this instance queued (and committed): sent at once by the loop, or by drain(). */
  queued(id: string): void {
    this.mine.set(id, Date.now());
  }

  /** Starts the loop (no-op with a poll interval of 0, or when started). */
  start(): void {
    if (this.options.pollIntervalMs <= 0) return;
    this.loop.start();
  }

  /** Stops claiming; the emails in hand are finished (each bounded by the transport's timeouts). Nothing else is drained. */
  stop(): Promise<void> {
    return this.loop.stop();
  }

  wake(): void {
    this.loop.wake();
  }

  /**
   * One attempt at the due emails this instance queued, and the end of the passes in progress
   * (one may hold some of them): resolves once each has been sent, put off for a retry or given up.
   */
  async drain(): Promise<void> {
    while (this.mine.size > 0 && (await this.runOnce(this.ours())) > 0);
    await Promise.allSettled([...this.inflight]);
  }

  /** One pass: claims up to a batch of due emails (only `ids` when given) and sends them; answers how many. */
  runOnce(ids?: string[]): Promise<number> {
    const pass = (async () => {
      const claimed = await this.outbox.claim(BATCH, EMAIL_LEASE_MS, ids);
      await Promise.all(claimed.map((email) => this.deliver(email)));
      return claimed.length;
    })();
    this.inflight.add(pass);
    void pass.finally(() => this.inflight.delete(pass)).catch(() => {});
    return pass;
  }

  private async deliver(email: ClaimedEmail): Promise<void> {
    const max = this.options.retryDelaysMs.length + 1;
    let reason: string;
    if (email.mail === null) reason = 'the email body could not be opened (sealed under another master key)';
    else if (email.attempts > max) reason = 'the last attempt ended without an outcome (the sender stopped)';
    else {
      try {
        await this.mailer.send(email.mail);
        await this.outbox.markSent(email.id);
        this.mine.delete(email.id);
        this.hooks.sent(email);
        return;
      } catch (err) {
        reason = err instanceof Error ? err.message : String(err);
      }
    }
    try {
      if (email.mail !== null && email.attempts < max) {
        const delay = this.options.retryDelaysMs[email.attempts - 1]!;
        // The retry is everyone's: due on the poll (or this instance's timer for it).
        this.mine.delete(email.id);
        if (await this.outbox.markRetry(email, reason, delay)) {
          this.nextRetryAt = Math.min(this.nextRetryAt, Date.now() + delay);
          this.hooks.retrying(email, reason);
        }
        return;
      }
      this.mine.delete(email.id);
      await this.outbox.markFailed(email, reason, (em) => this.hooks.failed(em, email, reason));
    } catch (err) {
      // The lease runs out and the email is due again.
      this.hooks.fault(err);
    }
  }

  /** The ids of `mine`, after forgetting those queued longer than a lease ago. */
  private ours(): string[] {
    const forget = Date.now() - EMAIL_LEASE_MS;
    for (const [id, at] of this.mine) if (at < forget) this.mine.delete(id);
    return [...this.mine.keys()];
  }

  /** One round of the loop: ours first, at once; everyone's (retries, other instances', leases run out) on the poll. True when it claimed any. */
  private async round(): Promise<boolean> {
    const now = Date.now();
    const poll = now >= this.nextPollAt || now >= this.nextRetryAt;
    let claimed = 0;
    if (this.mine.size > 0) claimed += await this.runOnce(this.ours());
    if (poll) {
      this.nextPollAt = now + this.options.pollIntervalMs;
      if (now >= this.nextRetryAt) this.nextRetryAt = Number.POSITIVE_INFINITY;
      claimed += await this.runOnce();
    }
    return claimed > 0;
  }
}
