import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import type { Clock } from '../shared/clock';
import { notFound } from '../shared/errors';
import { randomReference } from '../shared/random';
import type { Tenant } from '../merchants/tenant';
import { AuditActions, type AuditService } from '../merchants/audit/audit.service';
import { authorize } from '../merchants/authorization';
import type { EnvironmentMode } from '../merchants/app-environment.entity';
import { Order } from '../orders/order.entity';
import { OrderStatus } from '../orders/order-status';
import { CardDetail } from '../orders/card-detail.entity';
import { TimelineEvents, type TimelineService } from '../timeline/timeline.service';
import { RecurringPayment } from './recurring-payment.entity';
import { renewalRule } from '../links/link-status';
import { requireProcessorFor, ResponseCodes, type PaymentProcessor, type PaymentProcessors } from './processor';
import type { PaymentSettlement } from './settlement';
import { MAX_CHARGE_RETRIES, nextPeriodAfter, RETRY_DELAY_MS, SubscriptionBooks } from './subscription-books';

export { MAX_CHARGE_RETRIES, nextPeriodAfter } from './subscription-books';

/** A renewal recorded by its claim (order and payment Processing, committed), to be charged. */
interface ChargeClaim {
  recurringId: number;
  paymentId: number;
  /** The payment's reference: the charge's idempotency key. */
  key: string;
  /** The saved card's token, charged. */
  token: string;
  amount: string;
  currency: string;
  processorReference: string;
  mode: EnvironmentMode;
}

/**
 * Subscriptions: the first successful card payment of an order with a frequency sets one up
 * (subscription-books.ts); the scheduler then charges the saved token at the frequency until
 * the number of payments is reached, through the processor of the subscription's environment
 * (test or live), as a pay would be. Each due subscription is claimed with FOR UPDATE SKIP
 * LOCKED, and the claim writes the row it claims (`chargeState`, in the claiming transaction):
 * another instance's claim that reaches the row after that commit re-checks the written row and
 * passes it by, so several instances never charge one period twice.
 */
export class RecurringBillingService {
  /** The subscriptions' books, kept by the settlement of their payments. */
  readonly books: SubscriptionBooks;

  constructor(
    private readonly orm: MikroORM,
    private readonly processors: PaymentProcessors,
    private readonly timeline: TimelineService,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {
    this.books = new SubscriptionBooks(clock, timeline);
  }

  /** Where a renewal's attempt starts and its processor answer is written (the payment engine, which wires itself in). */
  private settlement: PaymentSettlement | undefined;

  attachSettlement(settlement: PaymentSettlement): void {
    this.settlement = settlement;
  }

  /**
   * Charges every subscription that is due now; returns how many charges were attempted.
   * Each charge is recorded first (its order and payment Processing, committed), the saved
   * token is charged with no transaction open, then the answer is settled by the payment
   * engine. A subscription with a renewal in flight (`chargeState` set until its settlement)
   * is never claimed again: a charge interrupted by a crash is settled by the engine's
   * reconciliation, not repeated. Right before the processor call the claim moves to `charging`
   * only if the subscription is still active; one cancelled since is not charged: its renewal
   * fails (`Z5`, its key closed at the processor) without any charge.
   */
  async chargeDue(limit = 50): Promise<number> {
    const settlement = this.settlement;
    if (!settlement) throw new Error('recurring billing: no settlement attached');
    let charged = 0;
    while (charged < limit) {
      const claim = await this.orm.em.fork().transactional(async (em) => {
        const rows: Array<{ id: number }> = await em.getConnection().execute(
          // The marker, and no renewal Processing either: an instance of the previous version
          // (during a rolling deploy) claims without writing the marker.
          `select r.id from recurring_payment r
            where r.state = 'active' and r.next_charge_at <= ? and r.charge_state is null
              and not exists (select 1 from checkout_order o where o.recurring_payment_id = r.id and o.status_id = ?)
            order by r.next_charge_at limit 1 for update of r skip locked`,
          [this.clock.now(), OrderStatus.Processing],
          'all',
          em.getTransactionContext(),
        );
        if (rows.length === 0) return null;
        const id = rows[0]!.id;
        try {
          // A savepoint: a fault in one subscription must not stop the others from being charged.
          return await em.transactional(async (inner) => (await this.applyLinkRules(inner, id)) ?? (await this.recordChargeAttempt(inner, id, settlement)));
        } catch (err) {
          this.onFault(err, id);
          await this.deferAfterFault(em, id);
          return 'deferred' as const;
        }
      });
      if (claim === null) break;
      if (claim === 'skipped' || claim === 'stopped') continue; // nothing charged; the subscription is no longer due
      charged += 1;
      if (claim === 'deferred') continue;
      try {
        const processor = requireProcessorFor(this.processors, claim.mode);
        if (!(await this.startCharging(claim.recurringId))) {
          await this.dropCancelledRenewal(processor, claim, settlement);
          continue;
        }
        const result = await processor.chargeToken({
          token: claim.token,
          amount: claim.amount,
          currency: claim.currency,
          reference: claim.processorReference,
          idempotencyKey: claim.key,
        });
        await settlement.settleAttempt(claim.paymentId, result, 'processor');
      } catch (err) {
        // The charge stays Processing: the engine's reconciliation settles it from the processor's record.
        this.onFault(err, claim.recurringId);
      }
    }
    return charged;
  }

  /**
   * The claim of subscription `id` moves to `charging`, in one statement of its own, only if the
   * subscription is still active: a cancel takes the row's lock, so it comes either before (this
   * answers false and nothing is sent) or after (the cancel sees the charge at the processor).
   */
  private async startCharging(id: number): Promise<boolean> {
    const rows: Array<{ id: number }> = await this.orm.em
      .getConnection()
      .execute(
        `update recurring_payment set charge_state = 'charging', updated_at = ? where id = ? and state = 'active' and charge_state = 'claimed' returning id`,
        [this.clock.now(), id],
        'all',
      );
    return rows.length > 0;
  }

  /**
   * A renewal recorded for a subscription cancelled before its charge was sent: its key is closed
   * at the processor (no call with it can move money), and that close fails it (`Z5`). Should the
   * processor not be reached, the renewal stays Processing and reconciliation fails it the same way.
   */
  private async dropCancelledRenewal(processor: PaymentProcessor, claim: ChargeClaim, settlement: PaymentSettlement): Promise<void> {
    if (await processor.closeKey(claim.key)) {
      await settlement.settleAttempt(claim.paymentId, { kind: 'declined', token: null, issuer: '', ...ResponseCodes.subscriptionCancelled }, 'processor');
    }
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

  /**
   * Cancels the subscription: no renewal is sent to the processor afterwards. A renewal already
   * recorded but not yet sent is not charged. One already sent (`chargeState` `charging` in the
   * answer) is not taken back: the processor decides it, its order shows the outcome, and an
   * approval counts as a payment made without reopening the subscription.
   */
  async cancel(tenant: Tenant, reference: string): Promise<RecurringPayment> {
    authorize(tenant, 'payments.write');
    return this.orm.em.fork().transactional(async (em) => {
      const recurring = await em.findOne(RecurringPayment, { reference, environment: tenant.environmentId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!recurring) throw notFound('recurring payment not found', '13');
      if (recurring.state === 'active' || recurring.state === 'pending') {
        recurring.state = 'cancelled';
        recurring.nextChargeAt = null;
        await em.flush();
        await this.audit.recordFor(em, tenant, AuditActions.recurringCancelled, `recurring payment ${recurring.reference}`);
      }
      return recurring;
    });
  }

  /**
   * A renewal obeys the rules of the payment link the subscription was set up on
   * (links/link-status.ts `renewalRule`): skipped while the link is disabled (the next period is
   * due as usual), stopped for good when the link no longer sells a subscription. Each is
   * recorded on the subscription's first order. Answers null when the renewal is to be charged.
   */
  private async applyLinkRules(em: EntityManager, id: number): Promise<'skipped' | 'stopped' | null> {
    const recurring = await em.findOneOrFail(RecurringPayment, { id }, { populate: ['order', 'order.paymentLink', 'order.paymentLink.type', 'frequency'] });
    const link = recurring.order.paymentLink;
    const rule = renewalRule(link);
    if (rule === 'charge') return null;
    const metadata = { recurringPaymentReference: recurring.reference, paymentLinkReference: link!.reference, due: recurring.nextChargeAt?.toISOString() };
    if (rule === 'skip') {
      recurring.nextChargeAt = nextPeriodAfter(recurring.nextChargeAt ?? this.clock.now(), recurring.frequency.hours, this.clock.now());
      this.timeline.record(em, recurring.order, TimelineEvents.renewalSkipped, 'system', 'Renewal not charged: the payment link is disabled', metadata);
      await em.flush();
      return 'skipped';
    }
    recurring.state = 'stopped';
    recurring.nextChargeAt = null;
    this.timeline.record(
      em,
      recurring.order,
      TimelineEvents.subscriptionStopped,
      'system',
      'Subscription stopped: the payment link no longer sells it',
      metadata,
    );
    await em.flush();
    return 'stopped';
  }

  /**
   * The charge's order, made Initiated and moved to Processing by the `renewal` actor, with its
   * payment, in the claiming transaction: nothing is charged yet. A subscription whose
   * environment has no processor (live, none configured) is refused here, before anything is
   * written, as a pay would be: the charge is deferred like any other fault.
   */
  private async recordChargeAttempt(em: EntityManager, id: number, settlement: PaymentSettlement): Promise<ChargeClaim> {
    const recurring = await em.findOneOrFail(RecurringPayment, { id }, { populate: ['order', 'order.customer', 'order.environment', 'frequency'] });
    const parent = recurring.order;
    const mode: EnvironmentMode = parent.environment.mode;
    requireProcessorFor(this.processors, mode);
    // Charge number n: one more than the orders of this subscription so far (the first included).
    const [{ count }] = await em
      .getConnection()
      .execute('select count(*)::int as count from checkout_order where recurring_payment_id = ?', [recurring.id], 'all', em.getTransactionContext());
    const n = Number(count) + 1;
    const order = em.create(Order, {
      environment: parent.environment,
      // Named after the subscription (a unique reference of ours), never after a merchant's own order.
      reference: `${recurring.reference}-${n}`,
      processorReference: randomReference('PGW', 20),
      paymentReference: randomReference('PAY', 20),
      customer: parent.customer,
      customerEmail: parent.customerEmail,
      customerFirstName: parent.customerFirstName,
      customerLastName: parent.customerLastName,
      customerMobile: parent.customerMobile,
      customerCountry: parent.customerCountry,
      amount: parent.amount,
      currency: parent.currency,
      fee: parent.fee,
      feeRate: parent.feeRate,
      subsidiaryFee: parent.subsidiaryFee,
      customerFee: parent.customerFee,
      totalChargedAmount: parent.totalChargedAmount,
      statusId: OrderStatus.Initiated,
      narration: parent.narration,
      redirectUrl: parent.redirectUrl,
      paymentResponseCode: '01',
      paymentResponseMessage: 'Created order successfully',
      paymentLink: parent.paymentLink,
      recurringPaymentId: recurring.id,
      recurringPaymentReference: recurring.reference,
      version: 1,
    });
    // The saved card's token is for the charge call only: the payment keeps the token the processor gives its own charge (refunds name it).
    const payment = settlement.beginAttempt(em, order, { method: 'C', actor: 'renewal', instrument: 'Saved card' });
    recurring.chargeState = 'claimed';
    const firstCard = await em.findOne(CardDetail, { orderPayment: { order: parent } }, { orderBy: { id: 'desc' } });
    if (firstCard) {
      em.create(CardDetail, {
        orderPayment: payment,
        environment: parent.environment,
        status: false,
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
    this.timeline.record(em, order, TimelineEvents.created, 'system', `Recurring charge ${n} of ${recurring.numberOfPayments}`, {
      recurringPaymentReference: recurring.reference,
    });
    await em.flush();
    return {
      recurringId: recurring.id,
      paymentId: payment.id,
      key: payment.reference,
      token: recurring.cardToken!,
      amount: parent.totalChargedAmount,
      currency: parent.currency,
      processorReference: order.processorReference,
      mode,
    };
  }
}
