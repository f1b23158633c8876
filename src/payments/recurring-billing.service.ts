import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import type { Clock } from '../shared/clock';
import { notFound } from '../shared/errors';
import { randomReference } from '../shared/random';
import type { Tenant } from '../merchants/tenant';
import { Order, OrderStatus } from '../orders/order.entity';
import { OrderPayment } from '../orders/order-payment.entity';
import { CardDetail } from '../orders/card-detail.entity';
import type { OrderService } from '../orders/order.service';
import { TimelineEvents, type TimelineService } from '../timeline/timeline.service';
import type { OutboxService } from '../events/outbox.service';
import type { OrderStatusChange } from '../events/order-status-bus';
import type { EventFanout } from '../events/event-fanout';
import { RecurringPayment } from './recurring-payment.entity';
import type { PaymentProcessor } from './processor';

/** A failed charge is retried this many times, an hour apart, before the subscription fails. */
export const MAX_CHARGE_RETRIES = 3;
const RETRY_DELAY_MS = 3600_000;

/**
 * Subscriptions: the first successful card payment of an order with a frequency sets one up;
 * the scheduler then charges the saved token at the frequency until the number of payments
 * is reached. Each due subscription is claimed with FOR UPDATE SKIP LOCKED, so several
 * instances of the service never charge the same one twice.
 */
export class RecurringBillingService {
  constructor(
    private readonly orm: MikroORM,
    private readonly processor: PaymentProcessor,
    private readonly orders: OrderService,
    private readonly timeline: TimelineService,
    private readonly outbox: OutboxService,
    private readonly events: EventFanout,
    private readonly clock: Clock,
  ) {}

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

  /** Charges every subscription that is due now; returns how many charges were attempted. */
  async chargeDue(limit = 50): Promise<number> {
    let charged = 0;
    while (charged < limit) {
      const changes: OrderStatusChange[] = [];
      const did = await this.orm.em.fork().transactional(async (em) => {
        const rows: Array<{ id: number }> = await em.getConnection().execute(
          `select id from recurring_payment where state = 'active' and next_charge_at <= ? order by next_charge_at limit 1 for update skip locked`,
          [this.clock.now()],
          'all',
          em.getTransactionContext(),
        );
        if (rows.length === 0) return false;
        const id = rows[0]!.id;
        try {
          // A savepoint: a fault in one subscription must not stop the others from being charged.
          await em.transactional((inner) => this.chargeOne(inner, id, changes));
        } catch (err) {
          changes.length = 0;
          this.onFault(err, id);
          await this.deferAfterFault(em, id);
        }
        return true;
      });
      this.events.afterCommit(changes);
      if (!did) break;
      charged += 1;
    }
    return charged;
  }

  /** Where faults of single charges are reported (the scheduler's log). */
  onFault: (err: unknown, recurringPaymentId: number) => void = () => {};

  /** A charge that failed for a reason of ours is retried later, like a declined one, then given up. */
  private async deferAfterFault(em: EntityManager, id: number): Promise<void> {
    const retryAt = new Date(this.clock.now().getTime() + RETRY_DELAY_MS);
    await em.getConnection().execute(
      `update recurring_payment
          set consecutive_failures = consecutive_failures + 1,
              state = case when consecutive_failures + 1 > ? then 'failed' else state end,
              next_charge_at = case when consecutive_failures + 1 > ? then null else ?::timestamptz end,
              updated_at = ?
        where id = ?`,
      [MAX_CHARGE_RETRIES, MAX_CHARGE_RETRIES, retryAt, this.clock.now(), id],
      'run',
      em.getTransactionContext(),
    );
  }

  async cancel(tenant: Tenant, reference: string): Promise<RecurringPayment> {
    return this.orm.em.fork().transactional(async (em) => {
      const recurring = await em.findOne(RecurringPayment, { reference, environment: tenant.environmentId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!recurring) throw notFound('recurring payment not found', '13');
      if (recurring.state === 'active' || recurring.state === 'pending') {
        recurring.state = 'cancelled';
        recurring.nextChargeAt = null;
      }
      return recurring;
    });
  }

  private async chargeOne(em: EntityManager, id: number, changes: OrderStatusChange[]): Promise<void> {
    const recurring = await em.findOneOrFail(RecurringPayment, { id }, { populate: ['order', 'order.customer', 'order.environment', 'frequency'] });
    const parent = recurring.order;
    // Charge number n: one more than the orders of this subscription so far (the first included).
    const [{ count }] = await em.getConnection().execute(
      'select count(*)::int as count from checkout_order where recurring_payment_id = ?',
      [recurring.id],
      'all',
      em.getTransactionContext(),
    );
    const n = Number(count) + 1;
    const order = em.create(Order, {
      environment: parent.environment,
      // Named after the subscription (a unique reference of ours), never after a merchant's own order.
      reference: `${recurring.reference}-${n}`,
      processorReference: randomReference('PGW', 20),
      paymentReference: randomReference('PAY', 20),
      customer: parent.customer,
      amount: parent.amount,
      currency: parent.currency,
      fee: parent.fee,
      feeRate: parent.feeRate,
      subsidiaryFee: parent.subsidiaryFee,
      customerFee: parent.customerFee,
      totalChargedAmount: parent.totalChargedAmount,
      narration: parent.narration,
      redirectUrl: parent.redirectUrl,
      paymentMethod: 'C',
      paymentLink: parent.paymentLink,
      recurringPaymentId: recurring.id,
      recurringPaymentReference: recurring.reference,
      version: 1,
    });
    // The order (and its reference) exists before any money moves.
    await em.flush();
    const result = await this.processor.chargeToken(recurring.cardToken!, parent.totalChargedAmount, parent.currency, order.processorReference, em);
    const approved = result.kind === 'approved';
    const statusId = approved ? OrderStatus.Successful : OrderStatus.Failed;
    const now = this.clock.now();
    Object.assign(order, {
      statusId,
      paymentResponseCode: result.code,
      paymentResponseMessage: result.message,
      providerResponseDate: now,
      datePaymentConfirmed: approved ? now : null,
    });
    const payment = em.create(OrderPayment, {
      order,
      reference: randomReference('OP', 20),
      paymentOptionId: 2,
      paymentOption: 'Card Payment',
      statusId,
      responseCode: result.code,
      responseMessage: result.message,
      amount: parent.totalChargedAmount,
      fee: parent.fee,
      processorToken: recurring.cardToken,
      instrument: 'Saved card',
    });
    const firstCard = await em.findOne(CardDetail, { orderPayment: { order: parent } }, { orderBy: { id: 'desc' } });
    if (firstCard) {
      em.create(CardDetail, {
        orderPayment: payment,
        environment: parent.environment,
        status: approved,
        country: firstCard.country,
        cardToken: firstCard.cardToken,
        cardExpiryMonth: firstCard.cardExpiryMonth,
        cardExpiryYear: firstCard.cardExpiryYear,
        cardType: firstCard.cardType,
        cardIssuer: firstCard.cardIssuer,
        cardFirstSixDigits: firstCard.cardFirstSixDigits,
        cardLastFourDigits: firstCard.cardLastFourDigits,
      });
    }
    this.timeline.record(em, order, TimelineEvents.created, 'system', `Recurring charge ${n} of ${recurring.numberOfPayments}`, { recurringPaymentReference: recurring.reference });
    this.timeline.record(em, order, approved ? TimelineEvents.settled : TimelineEvents.failed, 'system', approved ? 'Payment successful' : `Payment failed: ${result.message}`, { responseCode: result.code });

    if (approved) {
      recurring.paymentsMade += 1;
      recurring.consecutiveFailures = 0;
      if (recurring.paymentsMade >= recurring.numberOfPayments) {
        recurring.state = 'completed';
        recurring.nextChargeAt = null;
      } else {
        recurring.nextChargeAt = new Date(recurring.nextChargeAt!.getTime() + recurring.frequency.hours * 3600_000);
      }
    } else {
      recurring.consecutiveFailures += 1;
      if (recurring.consecutiveFailures > MAX_CHARGE_RETRIES) {
        recurring.state = 'failed';
        recurring.nextChargeAt = null;
      } else {
        recurring.nextChargeAt = new Date(now.getTime() + RETRY_DELAY_MS);
      }
    }
    await em.flush();
    const subsidiaryId = parent.environment.subsidiary.id;
    const aggregate = await this.orders.aggregateOf(em, order, subsidiaryId);
    changes.push(await this.outbox.recordOrderChange(em, aggregate, approved ? 'successful' : 'failed'));
    await em.flush();
  }
}
