import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { DomainError } from '../shared/errors';
import { Money } from '../shared/money';
import type { Clock } from '../shared/clock';
import { Order } from '../orders/order.entity';
import { OrderStatus, type OrderStatusId } from '../orders/order-status';
import { OrderPayment } from '../orders/order-payment.entity';
import { CardDetail } from '../orders/card-detail.entity';
import type { OrderAggregate, OrderService } from '../orders/order.service';
import { TimelineEvents, type TimelineService } from '../timeline/timeline.service';
import type { OutboxService } from '../events/outbox.service';
import type { OrderStatusChange } from '../events/order-status-bus';
import type { EventFanout } from '../events/event-fanout';
import type { PaymentLinkService } from '../links/payment-link.service';
import type { PaymentLink } from '../links/payment-link.entity';
import { processorCallClock, ResponseCodes, type FinalProcessorResult, type ProcessorResult } from './processor';
import { randomReference } from '../shared/random';
import { methodOfOption, transition, type PaymentActor, type PaymentMethod } from './payment-state';
import { PAYMENT_OPTION_IDS, PAYMENT_OPTION_NAMES as PAYMENT_OPTION_LABELS } from '../shared/payment-options';
import type { SubscriptionBooks } from './subscription-books';
import type { AuthorizationAction } from './authorization-action.entity';

/** A payment attempt reached a status (reported after its transaction committed; for metrics). */
export interface PaymentOutcome {
  /** null for an order that expired unpaid (no attempt, no method). */
  method: PaymentMethod | null;
  status: 'pending' | 'successful' | 'failed' | 'authorized' | 'voided';
  /** The response code the order now carries (00, 02, a decline code, Z1–Z5, …). */
  code: string;
  actor: PaymentActor;
  /** The order, by its environment and reference (for the business event log). */
  environmentId: number;
  reference: string;
}

/** How an attempt starts: its method, who starts it, the instrument shown for it, and a saved card's token (renewals). */
export interface AttemptStart {
  method: PaymentMethod;
  actor: 'pay_request' | 'renewal';
  instrument: string;
  processorToken?: string | null;
}

/**
 * The only caller of the transitions table (payment-state.ts): every status change of an
 * order and its payments is made here. An attempt starts (a pay request, a renewal), resumes
 * (an authentication page's answer) and ends: a processor answer (or a reconciliation, an
 * expiry, a supersession) applied under the order's and the payment's row locks, once; the
 * link rules re-checked on approval; the subscription's books kept; then, once for every
 * ending, the response code, the timeline, the change to the outbox and, after commit, to the
 * event fan-out and the outcome listeners (metrics).
 */
export class PaymentSettlement {
  constructor(
    private readonly orm: MikroORM,
    private readonly orders: OrderService,
    private readonly timeline: TimelineService,
    private readonly outbox: OutboxService,
    private readonly events: EventFanout,
    private readonly clock: Clock,
    private readonly links: PaymentLinkService,
    /** How long a 3-D Secure or PayPal authentication may stay unfinished. */
    private readonly authenticationTimeoutMs: number,
    private readonly subscriptions?: SubscriptionBooks,
  ) {}

  /**
   * The link's usage rules for `order` (links/link-usage.ts), under the link's lock: when an
   * attempt starts (by the payment engine) and when it is approved (here). An abandoned
   * attempt the rules let go of is failed here, as superseded by `order`.
   */
  lockLinkRules(em: EntityManager, order: Order, stage: 'attempt' | 'settle', changes: OrderStatusChange[]): Promise<PaymentLink> {
    return this.links.lockForPayment(em, order, stage, (orderId) => this.supersedeAttempt(em, orderId, order, changes));
  }

  /**
   * An Initiated order's attempt starts (in the caller's transaction, before the processor is
   * called): the order moves to Processing by `start.actor`, and its payment is made, Processing.
   */
  beginAttempt(em: EntityManager, order: Order, start: AttemptStart): OrderPayment {
    transition(order, OrderStatus.Processing, start.actor, start.method);
    order.paymentMethod = start.method;
    order.paymentResponseCode = ResponseCodes.processing.code;
    order.paymentResponseMessage = ResponseCodes.processing.message;
    return em.create(OrderPayment, {
      order,
      reference: randomReference('OP', 20),
      paymentOptionId: PAYMENT_OPTION_IDS[start.method]!,
      paymentOption: PAYMENT_OPTION_LABELS[start.method]!,
      statusId: OrderStatus.Processing,
      responseCode: ResponseCodes.processing.code,
      responseMessage: ResponseCodes.processing.message,
      amount: order.totalChargedAmount,
      fee: order.fee,
      processorToken: start.processorToken ?? null,
      processingStartedAt: processorCallClock(),
      instrument: start.instrument,
    });
  }

  /** An authentication page's answer goes to the processor: the attempt (locked by the caller) is Processing again. */
  resumeAttempt(order: Order, payment: OrderPayment, actor: 'otp_page' | 'paypal_page', method: PaymentMethod): void {
    transition(payment, OrderStatus.Processing, actor, method);
    transition(order, OrderStatus.Processing, actor, method);
    payment.processingStartedAt = processorCallClock();
  }

  /** A payment-link order left unpaid past its expiry (locked by the caller, still Initiated) fails: `Z4`, no attempt. */
  async expireUnpaidOrder(em: EntityManager, order: Order, changes: OrderStatusChange[]): Promise<void> {
    await this.settle(em, order, null, { kind: 'declined', token: null, issuer: '', ...ResponseCodes.orderExpired }, 'expiry', changes);
  }

  private readonly outcomeListeners = new Set<(outcome: PaymentOutcome) => void>();
  /** Outcomes noted inside a transaction, keyed by that transaction's list of changes: reported once it committed. */
  private readonly uncommittedOutcomes = new WeakMap<OrderStatusChange[], PaymentOutcome[]>();

  /** Hears each outcome once its transaction committed (metrics); returns the unsubscribe. */
  onOutcome(listener: (outcome: PaymentOutcome) => void): () => void {
    this.outcomeListeners.add(listener);
    return () => this.outcomeListeners.delete(listener);
  }

  private noteOutcome(changes: OrderStatusChange[], outcome: PaymentOutcome): void {
    const noted = this.uncommittedOutcomes.get(changes);
    if (noted) noted.push(outcome);
    else this.uncommittedOutcomes.set(changes, [outcome]);
  }

  /** After a transaction committed: its changes to the event fan-out, its outcomes to the listeners. */
  committed(changes: OrderStatusChange[]): void {
    this.events.afterCommit(changes);
    const outcomes = this.uncommittedOutcomes.get(changes);
    if (!outcomes) return;
    this.uncommittedOutcomes.delete(changes);
    for (const outcome of outcomes) {
      for (const listener of this.outcomeListeners) {
        try {
          listener(outcome);
        } catch {
          // A listener's fault is never the payment's.
        }
      }
    }
  }

  /**
   * Applies a processor answer to an attempt in its own transaction, if the attempt is still
   * Processing (a concurrent reconciliation may have applied the same record already).
   * Returns whether it changed anything.
   */
  async settleAttempt(paymentId: number, result: ProcessorResult, actor: 'processor' | 'reconciliation'): Promise<boolean> {
    return (await this.settleReturning(paymentId, result, actor)).changed;
  }

  /** settleAttempt, answering also the attempt as it then stands (for the adapters' answers). */
  async settleReturning(
    paymentId: number,
    result: ProcessorResult,
    actor: 'processor' | 'reconciliation',
  ): Promise<{ changed: boolean; aggregate: OrderAggregate; payment: OrderPayment }> {
    const changes: OrderStatusChange[] = [];
    const settled = await this.orm.em.fork().transactional(async (em) => {
      const { order, payment } = await this.lockAttempt(em, paymentId);
      if (payment.statusId !== OrderStatus.Processing) {
        return { changed: false, aggregate: await this.orders.aggregateOf(em, order, order.environment.subsidiary.id), payment };
      }
      if (actor === 'reconciliation') {
        this.timeline.record(em, order, TimelineEvents.reconciled, 'system', 'Settled from the processor record of an interrupted attempt', {
          orderPaymentReference: payment.reference,
        });
      }
      return { changed: true, aggregate: await this.applyProcessorResult(em, order, payment, result, actor, changes), payment };
    });
    this.committed(changes);
    return settled;
  }

  /** Lock order first, then payment: the same order everywhere. */
  async lockAttempt(em: EntityManager, paymentId: number): Promise<{ order: Order; payment: OrderPayment }> {
    const found = await em.findOneOrFail(OrderPayment, { id: paymentId });
    const order = await em.findOneOrFail(Order, { id: found.order.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const payment = await em.findOneOrFail(OrderPayment, { id: paymentId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    await em.populate(order, ['environment', 'paymentLink', 'paymentLink.type', 'customer']);
    return { order, payment };
  }

  private async applyProcessorResult(
    em: EntityManager,
    order: Order,
    payment: OrderPayment,
    result: ProcessorResult,
    actor: 'processor' | 'reconciliation',
    changes: OrderStatusChange[],
  ): Promise<OrderAggregate> {
    const method = methodOfOption(payment.paymentOptionId);
    const card = await em.findOne(CardDetail, { orderPayment: payment });
    if (card && result.token !== null && !card.cardToken) card.cardToken = result.token;
    if (card && result.issuer && !card.cardIssuer) card.cardIssuer = result.issuer;
    if (result.token && !payment.processorToken) payment.processorToken = result.token;
    payment.processingStartedAt = null;

    if (result.kind === 'challenge') {
      transition(payment, OrderStatus.PendingAuthentication, actor, method);
      transition(order, OrderStatus.PendingAuthentication, actor, method);
      payment.responseCode = ResponseCodes.pending.code;
      payment.responseMessage = ResponseCodes.pending.message;
      payment.authenticationExpiresAt ??= new Date(this.clock.now().getTime() + this.authenticationTimeoutMs);
      order.paymentResponseCode = ResponseCodes.pending.code;
      order.paymentResponseMessage = ResponseCodes.pending.message;
      return this.publish(em, order, { method, status: 'pending', code: ResponseCodes.pending.code, actor }, changes);
    }

    const final: FinalProcessorResult = result;
    if (payment.authenticationExpiresAt !== null) {
      // The answer to an authentication page (a first call that needed none has no deadline).
      const passed = ![ResponseCodes.authenticationFailed.code, ResponseCodes.customerCancelled.code].includes(final.code as never);
      this.timeline.record(
        em,
        order,
        passed ? TimelineEvents.authenticationPassed : TimelineEvents.authenticationFailed,
        'system',
        passed ? 'Customer authenticated' : final.message,
        {
          orderPaymentReference: payment.reference,
        },
      );
    }
    if (final.kind === 'approved' && order.paymentLink && order.recurringPaymentId === null) {
      // The link's rules were enforced when the attempt started (under the link's lock, counting
      // attempts in progress). If they changed since (link deactivated, limit lowered), the
      // processor has still moved the money: the approval stands, recorded for the merchant,
      // rather than a failure in our books alone for a charged card.
      try {
        await this.lockLinkRules(em, order, 'settle', changes);
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        this.timeline.record(em, order, TimelineEvents.linkRuleOverridden, 'system', `Approved by the processor although: ${err.message}`, {
          orderPaymentReference: payment.reference,
        });
      }
    }
    return this.settle(em, order, payment, final, actor, changes);
  }

  async expireAuthentication(em: EntityManager, order: Order, payment: OrderPayment, changes: OrderStatusChange[]): Promise<void> {
    this.timeline.record(em, order, TimelineEvents.authenticationFailed, 'system', ResponseCodes.authenticationExpired.message, {
      orderPaymentReference: payment.reference,
    });
    await this.settle(
      em,
      order,
      payment,
      { kind: 'declined', token: payment.processorToken, issuer: '', ...ResponseCodes.authenticationExpired },
      'expiry',
      changes,
    );
  }

  /** An attempt ends (or, with no payment, an order that had none): the order and its payment Successful or Failed. */
  private async settle(
    em: EntityManager,
    order: Order,
    payment: OrderPayment | null,
    result: FinalProcessorResult,
    actor: PaymentActor,
    changes: OrderStatusChange[],
  ): Promise<OrderAggregate> {
    const now = this.clock.now();
    const method = payment ? methodOfOption(payment.paymentOptionId) : null;
    const approved = result.kind === 'approved';
    // An approved payment of an order captured later is held, not taken (docs/capture.md).
    const held = approved && payment !== null && order.captureMethod === 'MANUAL';
    const statusId: OrderStatusId = held ? OrderStatus.Authorized : approved ? OrderStatus.Successful : OrderStatus.Failed;
    const answer = held ? ResponseCodes.authorized : result;
    if (payment) transition(payment, statusId, actor, method);
    transition(order, statusId, actor, method);
    if (payment) {
      payment.responseCode = answer.code;
      payment.responseMessage = answer.message;
      payment.authenticationExpiresAt = null;
      payment.processingStartedAt = null;
    }
    order.paymentResponseCode = answer.code;
    order.paymentResponseMessage = answer.message;
    order.providerResponseDate = now;
    if (held) {
      order.authorizedAt = now;
      order.authorizedAmount = order.amount;
    } else if (approved) order.datePaymentConfirmed = now;
    if (payment) {
      const card = await em.findOne(CardDetail, { orderPayment: payment });
      if (card) card.status = approved;
      if (this.subscriptions && !held) {
        if (order.recurringPaymentId !== null) await this.subscriptions.recordCharge(em, order, approved);
        else if (approved) await this.subscriptions.setUp(em, order, payment);
      }
    }
    if (held) {
      this.timeline.record(em, order, TimelineEvents.authorized, 'system', 'Payment authorized: the money is held until the merchant captures it', {
        responseCode: result.code,
        amount: order.totalChargedAmount,
      });
      return this.publish(em, order, { method, status: 'authorized', code: result.code, actor }, changes);
    }
    this.timeline.record(
      em,
      order,
      approved ? TimelineEvents.settled : TimelineEvents.failed,
      'system',
      approved ? 'Payment successful' : `Payment failed: ${result.message}`,
      {
        responseCode: result.code,
      },
    );
    return this.publish(em, order, { method, status: approved ? 'successful' : 'failed', code: result.code, actor }, changes);
  }

  /**
   * The processor's answer to a capture or a void of an Authorized order (order, payment and
   * action locked by the caller, the action still pending). Confirmed: a capture makes the order
   * Successful for the amount captured, its fee the one computed on that amount; a void (or an
   * expiry) makes it Voided. Refused: the order stays Authorized and the action failed.
   */
  async settleAuthorizationAction(
    em: EntityManager,
    order: Order,
    payment: OrderPayment,
    action: AuthorizationAction,
    result: FinalProcessorResult,
    changes: OrderStatusChange[],
  ): Promise<OrderAggregate> {
    const now = this.clock.now();
    const method = methodOfOption(payment.paymentOptionId);
    action.responseCode = result.code;
    action.responseMessage = result.message;
    action.settledAt = now;
    if (result.kind !== 'approved') {
      action.state = 'failed';
      this.timeline.record(em, order, TimelineEvents.authorizationActionFailed, 'system', `The ${action.kind} was refused: ${result.message}`, {
        kind: action.kind,
        responseCode: result.code,
      });
      await em.flush();
      return this.orders.aggregateOf(em, order, order.environment.subsidiary.id);
    }
    action.state = 'succeeded';
    order.providerResponseDate = now;
    if (action.kind === 'capture') {
      transition(payment, OrderStatus.Successful, 'capture', method);
      transition(order, OrderStatus.Successful, 'capture', method);
      const quote = action.quote!;
      const captured = new Money(action.amount!).toFixed(2);
      Object.assign(order, { amount: captured, ...quote });
      order.datePaymentConfirmed = now;
      payment.responseCode = order.paymentResponseCode = ResponseCodes.captured.code;
      payment.responseMessage = order.paymentResponseMessage = ResponseCodes.captured.message;
      this.timeline.record(em, order, TimelineEvents.captured, 'system', `Captured ${captured} ${order.currency}`, {
        amount: captured,
        totalChargedAmount: quote.totalChargedAmount,
        fee: quote.fee,
      });
      return this.publish(em, order, { method, status: 'successful', code: result.code, actor: 'capture' }, changes);
    }
    const actor = action.actor === 'expiry' ? 'expiry' : 'void';
    transition(payment, OrderStatus.Voided, actor, method);
    transition(order, OrderStatus.Voided, actor, method);
    const answer = actor === 'expiry' ? ResponseCodes.authorizationExpired : ResponseCodes.voided;
    payment.responseCode = order.paymentResponseCode = answer.code;
    payment.responseMessage = order.paymentResponseMessage = answer.message;
    this.timeline.record(
      em,
      order,
      TimelineEvents.voided,
      'system',
      actor === 'expiry' ? 'Authorization released: not captured in time' : 'Authorization released by the merchant',
    );
    return this.publish(em, order, { method, status: 'voided', code: answer.code, actor }, changes);
  }

  /** After every status change: written, then the order as it now stands to the outbox, and the outcome noted for after commit. */
  private async publish(
    em: EntityManager,
    order: Order,
    outcome: Omit<PaymentOutcome, 'environmentId' | 'reference'>,
    changes: OrderStatusChange[],
  ): Promise<OrderAggregate> {
    await em.flush();
    const aggregate = await this.orders.aggregateOf(em, order, order.environment.subsidiary.id);
    changes.push(await this.outbox.recordOrderChange(em, aggregate, outcome.status));
    await em.flush();
    this.noteOutcome(changes, { ...outcome, environmentId: order.environment.id, reference: order.reference });
    return aggregate;
  }

  /** Fails one unauthenticated attempt (locked by the link rules) as superseded by `by`: their way to free an abandoned page's place. */
  private async supersedeAttempt(em: EntityManager, orderId: number, by: Order, changes: OrderStatusChange[]): Promise<boolean> {
    const other = await em.findOneOrFail(Order, { id: orderId }, { refresh: true, populate: ['environment'] });
    const payment = await em.findOne(OrderPayment, { order: other, statusId: OrderStatus.PendingAuthentication }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!payment) return false;
    this.timeline.record(em, other, TimelineEvents.authenticationFailed, 'system', ResponseCodes.superseded.message, {
      orderPaymentReference: payment.reference,
      supersededBy: by.reference,
    });
    await this.settle(em, other, payment, { kind: 'declined', token: payment.processorToken, issuer: '', ...ResponseCodes.superseded }, 'supersede', changes);
    return true;
  }
}
