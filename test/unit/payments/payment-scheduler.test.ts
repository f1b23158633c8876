import type { FastifyBaseLogger } from 'fastify';
import { PaymentScheduler } from '../../../src/payments/payment-scheduler';
import type { PaymentService } from '../../../src/payments/payment.service';
import type { RecurringBillingService } from '../../../src/payments/recurring-billing.service';

describe('the payment scheduler', () => {
  it('runs every job of a run even when one of them fails, and logs the one that failed', async () => {
    const ran: string[] = [];
    const errors: Array<Record<string, unknown>> = [];
    const infos: Array<Record<string, unknown>> = [];
    const payments = {
      reconcileInterruptedAttempts: async () => {
        ran.push('reconciliation');
        throw new Error('the processor timed out');
      },
      expireStaleAuthentications: async () => (ran.push('expiry'), 2),
    } as unknown as PaymentService;
    const recurring = { chargeDue: async () => (ran.push('charges'), 1) } as unknown as RecurringBillingService;
    const log = { error: (o: Record<string, unknown>) => errors.push(o), info: (o: Record<string, unknown>) => infos.push(o) } as unknown as FastifyBaseLogger;
    const scheduler = new PaymentScheduler(payments, recurring, log, [
      async () => {
        ran.push('refund reconciliation');
        throw new Error('also down');
      },
      async () => ran.push('purge'),
    ]);
    await scheduler.runOnce();
    expect(ran).toEqual(['reconciliation', 'expiry', 'charges', 'refund reconciliation', 'purge']);
    expect(errors.map((e) => e.job)).toEqual(['reconciliation', 'housekeeping']);
    expect(infos).toEqual([{ reconciled: 0, expired: 2, charged: 1 }]);
  });
});
