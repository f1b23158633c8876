import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { DomainError } from '../shared/errors';
import type { Clock } from '../shared/clock';
import { Order } from '../orders/order.entity';
import { OrderStatus } from '../orders/order-status';
import { OrderPayment } from '../orders/order-payment.entity';
import { CardDetail } from '../orders/card-detail.entity';
import type { OrderAggregate, OrderService } from '../orders/order.service';
import { TimelineEvents, type TimelineService } from '../timeline/timeline.service';
import type { OutboxService } from '../events/outbox.service';
import type { OrderStatusChange } from '../events/order-status-bus';
import type { EventFanout } from '../events/event-fanout';
import type { PaymentLinkService } from '../links/payment-link.service';
import type { PaymentLink } from '../links/payment-link.entity';
import { ResponseCodes, type FinalProcessorResult, type ProcessorResult } from './processor';
import { methodOfOption, type PaymentActor, type PaymentMethod } from './payment-state';
import {
  authenticationEntry,
  awaitAuthentication,
  endAttempt,
  releaseClaimRows,
  resumeAttemptRows,
  startAttempt,
  takeProcessorDetails,
  type ResumeActor,
} from './attempt-rules';
import type { SubscriptionBooks } from './subscription-books';
import { Listeners } from '../shared/listeners';

/**
 * How long an attempt's 3-D Secure or PayPal page stays its customer's before a newer attempt on a
 * link that can be used up may supersede it: a customer reading their one-time password is not
 * overtaken by another who started a moment later.
 */
export const ABANDONED_AFTER_MS = 60_000;

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

/**
 * How an attempt starts: its method, who starts it, the instrument shown for it. Its payment's
 * processor token is the one the processor gives that payment (a renewal's too, not the saved card's).
 */
export interface AttemptStart {
  method: PaymentMethod;
  actor: 'pay_request' | 'renewal';
  instrument: string;
}

/**
 * With attempt-rules.ts (the attempt's changes as functions of its rows, which the plain-SQL
 * common path in money-path.ts applies too) and authorization-rules.ts (a capture's or void's,
 * applied by capture.service.ts), the only caller of the transitions table (payment-state.ts):
 * every status change of an order and its payments is made here or there. An attempt starts (a pay request, a renewal), resumes
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
   * attempt starts (by the payment engine) and when it is approved (here).
   */
  lockLinkRules(em: EntityManager, order: Order, stage: 'attempt' | 'settle'): Promise<PaymentLink> {
    // An unauthenticated attempt is abandoned once its page has been open for ABANDONED_AFTER_MS (at most half its time).
    const openFor = Math.min(ABANDONED_AFTER_MS, this.authenticationTimeoutMs / 2);
    return this.links.lockForPayment(em, order, stage, new Date(this.clock.now().getTime() + this.authenticationTimeoutMs - openFor));
  }

  /**
   * An Initiated order's attempt starts (in the caller's transaction, before the processor is
   * called): the order moves to Processing by `start.actor`, and its payment is made, Processing.
   */
  beginAttempt(em: EntityManager, order: Order, start: AttemptStart): OrderPayment {
    return em.create(OrderPayment, { order, ...startAttempt(order, start) });
  }

  /** An authentication page's answer goes to the processor (or the engine closes its challenge): the attempt (locked by the caller) is Processing again. */
  resumeAttempt(order: Order, payment: OrderPayment, actor: ResumeActor, method: PaymentMethod | null): void {
    resumeAttemptRows(order, payment, actor, method);
  }

  /** A claim (expiry, supersession) whose close did not reach the processor is released: the attempt (locked by the caller) awaits its cardholder again. */
  releaseClaim(order: Order, payment: OrderPayment, actor: 'expiry' | 'supersede', method: PaymentMethod | null): void {
    releaseClaimRows(order, payment, actor, method);
  }

  /** A payment-link order left unpaid past its expiry (locked by the caller, still Initiated) fails: `Z4`, no attempt. */
  async expireUnpaidOrder(em: EntityManager, order: Order, changes: OrderStatusChange[]): Promise<void> {
    await this.settle(em, order, null, { kind: 'declined', token: null, issuer: '', ...ResponseCodes.orderExpired }, 'expiry', changes);
  }

  /** When an authentication asked for now expires. */
  authenticationDeadline(): Date {
    return new Date(this.clock.now().getTime() + this.authenticationTimeoutMs);
  }

  private readonly outcomeListeners = new Listeners<PaymentOutcome>();
  /** Outcomes noted inside a transaction, keyed by that transaction's list of changes: reported once it committed. */
  private readonly uncommittedOutcomes = new WeakMap<OrderStatusChange[], PaymentOutcome[]>();

  /** Hears each outcome once its transaction committed (metrics); returns the unsubscribe. */
  onOutcome(listener: (outcome: PaymentOutcome) => void): () => void {
    return this.outcomeListeners.add(listener);
  }

  /** An outcome of a transaction not committed yet: reported by `committed(changes)`. */
  noteOutcome(changes: OrderStatusChange[], outcome: PaymentOutcome): void {
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
    for (const outcome of outcomes) this.outcomeListeners.emit(outcome);
  }

  /**
   * Applies a processor answer to an attempt in its own transaction, if the attempt is still
   * Processing (a concurrent reconciliation may have applied the same record already).
   * Returns whether it changed anything.
   */
  async settleAttempt(paymentId: number, result: ProcessorResult, actor: 'processor' | 'reconciliation'): Promise<boolean> {
    return (await this.settleReturning(paymentId, result, actor)).changed;
  }

  /** settleAttempt, answering also the attempt as it then stands (for the adapters' answers); `orderId`: its order's, when the caller knows it. */
  async settleReturning(
    paymentId: number,
    result: ProcessorResult,
    actor: 'processor' | 'reconciliation',
    orderId?: number,
  ): Promise<{ changed: boolean; aggregate: OrderAggregate; payment: OrderPayment }> {
    const changes: OrderStatusChange[] = [];
    const settled = await this.orm.em.fork().transactional(async (em) => {
      const { order, payment } = await this.lockAttempt(em, paymentId, orderId);
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

  /** The card of a payment (managed by `em`), read once per payment instance: settling reads it twice. */
  private readonly cards = new WeakMap<OrderPayment, CardDetail | null>();
  private async cardOf(em: EntityManager, payment: OrderPayment): Promise<CardDetail | null> {
    if (this.cards.has(payment)) return this.cards.get(payment)!;
    const card = await em.findOne(CardDetail, { orderPayment: payment });
    this.cards.set(payment, card);
    return card;
  }

  /** Lock order first, then payment: the same order everywhere. */
  async lockAttempt(em: EntityManager, paymentId: number, orderId?: number): Promise<{ order: Order; payment: OrderPayment }> {
    // A payment never changes order: a caller that read it already names the order, saving a statement (checked below).
    const lockOrderId = orderId ?? (await em.findOneOrFail(OrderPayment, { id: paymentId })).order.id;
    const order = await em.findOneOrFail(Order, { id: lockOrderId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const payment = await em.findOneOrFail(OrderPayment, { id: paymentId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (payment.order.id !== order.id) throw new Error(`payment ${paymentId} is not of order ${lockOrderId}`);
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
    takeProcessorDetails(payment, await this.cardOf(em, payment), result);

    if (result.kind === 'challenge') {
      awaitAuthentication(order, payment, actor, method, this.authenticationDeadline());
      return this.publish(em, order, { method, status: 'pending', code: ResponseCodes.pending.code, actor }, changes);
    }

    const final: FinalProcessorResult = result;
    // The answer to an authentication page (a first call that needed none has no deadline).
    const authenticated = authenticationEntry(payment, final);
    if (authenticated) this.timeline.record(em, order, authenticated.event, 'system', authenticated.description, authenticated.metadata);
    if (final.kind === 'approved' && order.paymentLink && order.recurringPaymentId === null) {
      // The link's rules were enforced when the attempt started (under the link's lock, counting
      // attempts in progress). If they changed since (link deactivated, limit lowered), the
      // processor has still moved the money: the approval stands, recorded for the merchant,
      // rather than a failure in our books alone for a charged card.
      try {
        await this.lockLinkRules(em, order, 'settle');
      } catch (err) {
        if (!(err instanceof DomainError)) throw err;
        this.timeline.record(em, order, TimelineEvents.linkRuleOverridden, 'system', `Approved by the processor although: ${err.message}`, {
          orderPaymentReference: payment.reference,
        });
      }
    }
    return this.settle(em, order, payment, final, actor, changes);
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
    const method = payment ? methodOfOption(payment.paymentOptionId) : null;
    const card = payment ? await this.cardOf(em, payment) : null;
    const { held, approved, entry } = endAttempt(order, payment, card, result, actor, method, this.clock.now());
    if (payment && this.subscriptions && !held) {
      if (order.recurringPaymentId !== null) await this.subscriptions.recordCharge(em, order, approved);
      else if (approved) await this.subscriptions.setUp(em, order, payment);
    }
    this.timeline.record(em, order, entry.event, 'system', entry.description, entry.metadata);
    const status = held ? 'authorized' : approved ? 'successful' : 'failed';
    return this.publish(em, order, { method, status, code: result.code, actor }, changes);
  }

  /** After every status change: written, then the order as it now stands to the outbox, and the outcome noted for after commit. */
  private async publish(
    em: EntityManager,
    order: Order,
    outcome: Omit<PaymentOutcome, 'environmentId' | 'reference'>,
    changes: OrderStatusChange[],
  ): Promise<OrderAggregate> {
    // The event's sequence number is written with the status change (one update of the order, not two).
    order.eventSequence += 1;
    await em.flush();
    const aggregate = await this.orders.aggregateOf(em, order, order.environment.subsidiary.id);
    changes.push(await this.outbox.recordOrderChange(em, aggregate, outcome.status));
    this.noteOutcome(changes, { ...outcome, environmentId: order.environment.id, reference: order.reference });
    return aggregate;
  }
}
