import type { FastifyBaseLogger } from 'fastify';
import type { PaymentService } from './payment.service';
import type { RecurringBillingService } from './recurring-billing.service';

/**
 * Background jobs of the payment engine, run every `intervalMs` in each instance: settle
 * attempts interrupted between processor call and settlement, expire unfinished
 * authentications and unpaid payment-link orders, charge due subscriptions. Both are safe to run in several
 * instances at once (row locks, SKIP LOCKED). A run never overlaps the previous one.
 */
export class PaymentScheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly payments: PaymentService,
    private readonly recurring: RecurringBillingService,
    private readonly log: FastifyBaseLogger,
    /** Other periodic housekeeping run alongside (e.g. purging expired idempotency keys). */
    private readonly housekeeping: Array<() => Promise<unknown>> = [],
  ) {}

  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      this.running ??= this.runOnce().finally(() => (this.running = undefined));
    }, intervalMs);
    this.timer.unref();
  }

  /** At start, before serving: attempts a previous process left with the processor are settled from its record. */
  async reconcileOnStart(): Promise<void> {
    try {
      const reconciled = await this.payments.reconcileInterruptedAttempts();
      if (reconciled) this.log.warn({ reconciled }, 'settled payment attempts interrupted by a previous process');
    } catch (err) {
      this.log.error({ err }, 'reconciling interrupted payment attempts failed; retried by the scheduler');
    }
  }

  /** Each job in turn; one that fails is logged and the others still run. */
  async runOnce(): Promise<void> {
    const reconciled = await this.run('reconciliation', () => this.payments.reconcileInterruptedAttempts());
    const expired = await this.run('expiry', () => this.payments.expireStaleAuthentications());
    const charged = await this.run('subscription charges', () => this.recurring.chargeDue());
    for (const job of this.housekeeping) await this.run('housekeeping', job);
    if (reconciled || expired || charged) this.log.info({ reconciled, expired, charged }, 'payment jobs ran');
  }

  private async run<T>(job: string, work: () => Promise<T>): Promise<T | 0> {
    try {
      return await work();
    } catch (err) {
      this.log.error({ err, job }, 'payment job failed; the other jobs ran, it runs again at the next interval');
      return 0;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }
}
