import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import type { Clock } from '../shared/clock';
import { randomReference } from '../shared/random';
import type { Order } from '../orders/order.entity';
import type { OrderPayment } from '../orders/order-payment.entity';
import { TimelineEvents, type TimelineService } from '../timeline/timeline.service';
import { RecurringPayment } from './recurring-payment.entity';

/** A failed charge is retried this many times, an hour apart, before the subscription fails. */
export const MAX_CHARGE_RETRIES = 3;
export const RETRY_DELAY_MS = 3600_000;

/**
 * A subscription's books, kept in the transaction that settles one of its payments: the first
 * successful card payment of an order with a frequency sets the subscription up; each renewal's
 * answer counts a payment made (or a failure, retried an hour later, then given up).
 */
export class SubscriptionBooks {
  constructor(
    private readonly clock: Clock,
    private readonly timeline: TimelineService,
  ) {}

  /** Where an approval beyond the number of payments is reported (the scheduler's error log). */
  onBeyondTerms: (recurringPaymentId: number, orderReference: string) => void = () => {};

  /** Called in the settling transaction of a successful first payment. */
  async setUp(em: EntityManager, order: Order, payment: OrderPayment): Promise<RecurringPayment | null> {
    if (!order.frequency || !order.numberOfPayments || !payment.processorToken || payment.paymentOptionId !== 2) return null;
    await em.populate(order, ['frequency']);
    const now = this.clock.now();
    const done = order.numberOfPayments <= 1;
    const recurring = em.create(RecurringPayment, {
      reference: randomReference('RP', 20),
      environment: order.environment,
      order,
      frequency: order.frequency,
      numberOfPayments: order.numberOfPayments,
      paymentsMade: 1,
      state: done ? 'completed' : 'active',
      cardToken: payment.processorToken,
      nextChargeAt: done ? null : new Date(now.getTime() + order.frequency.hours * 3600_000),
    });
    await em.flush();
    order.recurringPaymentId = recurring.id;
    order.recurringPaymentReference = recurring.reference;
    return recurring;
  }

  /**
   * Called in the transaction that settles a renewal charge: the subscription's bookkeeping. The
   * renewal is no longer in flight. An approval counts a payment made; a decline a failure
   * (retried an hour later, then given up). Only an active subscription moves on (completed,
   * failed, or its next charge): a cancelled or ended one keeps its state and schedule, though an
   * approval it got (a charge already at the processor when it was cancelled) is counted. An
   * approval beyond the number of payments is never counted past it: it is recorded on the
   * renewal's timeline (`subscription.charged_beyond_terms`) and reported, for the merchant to refund.
   */
  async recordCharge(em: EntityManager, order: Order, approved: boolean): Promise<void> {
    const recurring = await em.findOneOrFail(
      RecurringPayment,
      { id: order.recurringPaymentId! },
      { lockMode: LockMode.PESSIMISTIC_WRITE, populate: ['frequency'], strategy: 'select-in' },
    );
    if (recurring.order.id === order.id) return; // the first payment: set up, not a renewal
    recurring.chargeState = null;
    const now = this.clock.now();
    const active = recurring.state === 'active';
    if (approved) {
      if (recurring.paymentsMade >= recurring.numberOfPayments) {
        this.timeline.record(
          em,
          order,
          TimelineEvents.chargedBeyondTerms,
          'system',
          `Approved beyond the ${recurring.numberOfPayments} payments of the subscription: not counted, to be refunded`,
          { recurringPaymentReference: recurring.reference },
        );
        this.onBeyondTerms(recurring.id, order.reference);
        if (active) {
          recurring.state = 'completed';
          recurring.nextChargeAt = null;
        }
        return;
      }
      recurring.paymentsMade += 1;
      if (!active) return;
      recurring.consecutiveFailures = 0;
      if (recurring.paymentsMade >= recurring.numberOfPayments) {
        recurring.state = 'completed';
        recurring.nextChargeAt = null;
      } else {
        recurring.nextChargeAt = nextPeriodAfter(recurring.nextChargeAt ?? now, recurring.frequency.hours, now);
      }
    } else {
      if (!active) return;
      recurring.consecutiveFailures += 1;
      if (recurring.consecutiveFailures > MAX_CHARGE_RETRIES) {
        recurring.state = 'failed';
        recurring.nextChargeAt = null;
      } else {
        recurring.nextChargeAt = new Date(now.getTime() + RETRY_DELAY_MS);
      }
    }
  }
}

/**
 * The first period boundary after `now` on the schedule through `due`: one period after it,
 * or, when time jumped past further periods, the next one still ahead. Periods missed while
 * nothing ran are not caught up (one charge for them, not one each).
 */
export function nextPeriodAfter(due: Date, hours: number, now: Date): Date {
  const period = hours * 3600_000;
  const periods = Math.max(1, Math.floor((now.getTime() - due.getTime()) / period) + 1);
  return new Date(due.getTime() + periods * period);
}
