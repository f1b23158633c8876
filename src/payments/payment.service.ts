import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { notFound } from '../shared/errors';
import type { Clock } from '../shared/clock';
import { Money } from '../shared/money';
import type { Tenant } from '../merchants/tenant';
import { Order } from '../orders/order.entity';
import { isFinalStatus, OrderStatus, orderNotFound } from '../orders/order-status';
import { OrderPayment } from '../orders/order-payment.entity';
import { CardDetail } from '../orders/card-detail.entity';
import type { OrderAggregate, OrderService } from '../orders/order.service';
import { TimelineEvents, type TimelineService } from '../timeline/timeline.service';
import type { OutboxService } from '../events/outbox.service';
import type { EventFanout } from '../events/event-fanout';
import type { FeeQuote, FeeService } from '../fees/fee.service';
import type { PaymentLinkService } from '../links/payment-link.service';
import { AbandonedAttemptsInTheWay } from '../links/link-usage';
import { assertOrderPayable, validatePayRequest, type PayOrderInput, type ValidPayment } from './pay-validation';
import { attemptStartedEntry } from './attempt-rules';
import { PAYMENT_OPTION_NAMES as PAYMENT_OPTION_LABELS } from '../shared/payment-options';
import { requireProcessorFor, type PaymentProcessors, type ProcessorResult } from './processor';
import type { RecurringBillingService } from './recurring-billing.service';
import { methodOfOption, type PaymentActor, type PaymentMethod } from './payment-state';
import { crashAfterProcessorCallRequested, crashNow } from './test-hooks';
import { PaymentSettlement, type PaymentOutcome } from './settlement';
import { AUTHENTICATION_NOT_FOUND, PlainMoneyPath, type CarriedAttempt, type GuardedStep, type RecordedAttempt, type ResumeStep } from './money-path';
import { PaymentJobs, type StepFault } from './payment-jobs';
import { authenticationPageUrl } from './authentication-page';
import { CaptureService } from './capture.service';
import type { AuditService } from '../merchants/audit/audit.service';

export type { PaymentOutcome } from './settlement';

export type { BillingAddressInput, PayOrderInput } from './pay-validation';

export interface PayResult {
  aggregate: OrderAggregate;
  payment: OrderPayment;
  /** Where the customer goes next: the 3-D Secure / PayPal page, or the merchant when final. */
  redirectUrl: string;
  final: boolean;
}

/** What the cardholder's answer on an authentication page proves, and for which method. */
export type AuthenticationProof = { method: 'C'; otp: string } | { method: 'PAYPAL'; approve: boolean };

export interface AuthenticationOutcome {
  order: Order;
  redirectUrl: string;
  /** `processing`: the processor has not answered yet (another submission of the same page is being processed); `authorized`: held, captured later. */
  status: 'successful' | 'authorized' | 'failed' | 'processing';
}

export { AUTHENTICATION_NOT_FOUND } from './money-path';

export interface PaymentServiceOptions {
  publicUrl: string;
  /** How long a 3-D Secure or PayPal authentication may stay unfinished (also: how long a payment-link order may stay unpaid). */
  authenticationTimeoutMs: number;
  /**
   * An attempt the processor has no record of after this long never reached it: it is failed
   * (`Z5`). Also how long a completion the processor still shows as pending is left alone.
   */
  processorDeadlineMs?: number;
  /** Attempts younger than this are left to the request that is still handling them. */
  reconcileGraceMs?: number;
  /** Test-only fault injection (see test-hooks.ts). */
  crashAfterProcessorCall?: boolean;
  /** An authorization (captureMethod MANUAL) not captured within this is voided; default 168 hours. */
  authorizationTtlMs?: number;
}

/** How many times a new attempt on a link supersedes the abandoned attempts in its way before it takes the link's refusal. */
const SUPERSESSION_ROUNDS = 3;
const DEFAULT_PROCESSOR_DEADLINE_MS = 120_000;
const DEFAULT_RECONCILE_GRACE_MS = 5_000;
const DEFAULT_AUTHORIZATION_TTL_MS = 168 * 3_600_000;

/**
 * The payment engine, the one public face of payments/: request checks (pay-validation.ts),
 * every status change (settlement.ts, and for the common card pay money-path.ts in plain SQL,
 * both deciding through attempt-rules.ts and the table in payment-state.ts), the background
 * jobs (payment-jobs.ts) and the choice of processor (processor.ts) sit behind it.
 *
 * No processor call is made inside a database transaction: an attempt is recorded first
 * (order and payment Processing, committed), the processor is called with the attempt's
 * reference as idempotency key, and its answer is written in a second transaction that
 * applies it only if the attempt is still Processing. A crash between the call and the
 * write leaves the attempt Processing; `reconcileInterruptedAttempts` (at start and in the
 * scheduler) looks it up at the processor by its key and applies the processor's record, so
 * money the processor moved is never lost and never moved twice.
 */
export class PaymentService {
  private readonly publicUrl: string;
  private readonly crashAfterProcessorCall: boolean;
  private readonly settlement: PaymentSettlement;
  private readonly jobs: PaymentJobs;
  /** The common card pay, its settlement and the authentication pages' answers, in plain SQL (money-path.ts). */
  private readonly plain: PlainMoneyPath;
  /** Capture later: captures and voids of Authorized orders (capture.service.ts). */
  readonly captures: CaptureService;

  constructor(
    private readonly orm: MikroORM,
    private readonly processors: PaymentProcessors,
    orders: OrderService,
    private readonly timeline: TimelineService,
    outbox: OutboxService,
    events: EventFanout,
    private readonly clock: Clock,
    private readonly fees: FeeService,
    links: PaymentLinkService,
    options: PaymentServiceOptions,
    recurring?: RecurringBillingService,
    audit?: AuditService,
  ) {
    this.publicUrl = options.publicUrl;
    this.crashAfterProcessorCall = options.crashAfterProcessorCall ?? crashAfterProcessorCallRequested();
    this.settlement = new PaymentSettlement(orm, orders, timeline, outbox, events, clock, links, options.authenticationTimeoutMs, recurring?.books);
    // Renewals start and settle through the same settlement, charged through processorFor(mode) as a pay is.
    recurring?.attachSettlement(this.settlement);
    const deadlines = {
      processorDeadlineMs: options.processorDeadlineMs ?? DEFAULT_PROCESSOR_DEADLINE_MS,
      reconcileGraceMs: options.reconcileGraceMs ?? DEFAULT_RECONCILE_GRACE_MS,
    };
    this.plain = new PlainMoneyPath(orm, this.settlement, orders, outbox, fees, clock);
    this.jobs = new PaymentJobs(orm, this.settlement, processors, clock, deadlines);
    this.captures = new CaptureService(
      orm,
      processors,
      this.settlement,
      fees,
      orders,
      outbox,
      clock,
      { ...deadlines, authorizationTtlMs: options.authorizationTtlMs ?? DEFAULT_AUTHORIZATION_TTL_MS },
      audit,
    );
  }

  /** Hears each outcome once its transaction committed (metrics); returns the unsubscribe. */
  onOutcome(listener: (outcome: PaymentOutcome) => void): () => void {
    return this.settlement.onOutcome(listener);
  }

  /** A money-path write that found its rows changed since its read (a concurrent change) and was decided again under locks. */
  onGuardConflict(listener: (step: GuardedStep) => void): () => void {
    const stops = [this.plain.onGuardConflict(listener), this.captures.onGuardConflict(listener)];
    return () => stops.forEach((stop) => stop());
  }

  /**
   * Applies a processor answer to an attempt in its own transaction, if the attempt is still
   * Processing (a concurrent reconciliation may have applied the same record already).
   * Returns whether it changed anything.
   */
  settleAttempt(paymentId: number, result: ProcessorResult, actor: 'processor' | 'reconciliation'): Promise<boolean> {
    return this.settlement.settleAttempt(paymentId, result, actor);
  }

  async pay(tenant: Tenant, input: PayOrderInput): Promise<PayResult> {
    const { reference, method, country, card } = validatePayRequest(input, this.clock.now());
    const processor = requireProcessorFor(this.processors, tenant.mode);
    // 1. Record the attempt (short transaction, committed before the processor is called):
    //    the common card pay in plain SQL, anything else through the entity manager.
    const attempt =
      (card && (await this.plain.recordCardAttempt(tenant, reference, method, country, card))) ||
      (await this.recordAttempt(tenant, { reference, method, country, card }));

    // 2. Call the processor, with no transaction open. A failure here leaves the attempt
    //    Processing, for reconciliation from the processor's record.
    const result: ProcessorResult = card
      ? await processor.authorizeCard({
          ...card.secret,
          expiryMonth: card.expiryMonth,
          expiryYear: card.expiryYear,
          amount: attempt.amount,
          currency: attempt.currency,
          reference: attempt.processorReference,
          environmentId: tenant.environmentId,
          threeDSecure: attempt.threeDSecure,
          idempotencyKey: attempt.key,
        })
      : await processor.startPaypal({
          amount: attempt.amount,
          currency: attempt.currency,
          reference: attempt.processorReference,
          environmentId: tenant.environmentId,
          idempotencyKey: attempt.key,
        });
    if (this.crashAfterProcessorCall) crashNow();

    // 3. Settle (second transaction), unless reconciliation already did.
    const { aggregate, payment } = await this.settle(attempt.paymentId, result, attempt.orderId, attempt.carried);
    const pending = payment.statusId === OrderStatus.PendingAuthentication;
    return {
      aggregate,
      payment,
      redirectUrl: pending ? this.authenticationUrl(payment) : merchantRedirect(aggregate.order),
      // An Authorized order's payment is over for the customer: the merchant captures or voids it later.
      final: isFinalStatus(aggregate.order.statusId) || aggregate.order.statusId === OrderStatus.Authorized,
    };
  }

  /** A processor's answer to a request's call: the common case in plain SQL, anything else through the entity manager. */
  private async settle(paymentId: number, result: ProcessorResult, orderId: number, carried?: CarriedAttempt) {
    return (await this.plain.settle(paymentId, orderId, result, carried)) ?? (await this.settlement.settleReturning(paymentId, result, 'processor', orderId));
  }

  /**
   * Records an attempt through the entity manager: PayPal, a fee to recompute, a link that can be
   * used up. When abandoned attempts fill the link, those whose end makes room are superseded
   * (each claimed, its challenge closed at the processor, outside any transaction) and the
   * attempt is tried again, a few rounds at most.
   */
  private async recordAttempt(tenant: Tenant, payment: ValidPayment & { reference: string }): Promise<RecordedAttempt> {
    for (let round = 1; ; round++) {
      try {
        return await this.recordAttemptOnce(tenant, payment);
      } catch (err) {
        if (!(err instanceof AbandonedAttemptsInTheWay)) throw err;
        if (round > SUPERSESSION_ROUNDS) throw err.refusal;
        for (const orderId of err.orderIds) await this.jobs.supersedeAttempt(orderId);
      }
    }
  }

  private async recordAttemptOnce(tenant: Tenant, { reference, method, country, card }: ValidPayment & { reference: string }): Promise<RecordedAttempt> {
    // The option's rules (turned on, the amount at least its minimum) and its fee, read outside
    // any transaction. The fee follows the option actually paid with: quoted here when it differs
    // from the option the order's fee was computed for (card, at creation; an order whose fee is
    // another option's has been paid with it and is payable no more).
    const current = await this.orm.em
      .fork()
      .findOne(Order, { environment: tenant.environmentId, reference }, { fields: ['amount', 'currency', 'paymentMethod'] });
    if (!current) throw orderNotFound();
    await this.fees.assertPayable(tenant, new Money(current.amount), method, current.currency);
    const quote: FeeQuote | null =
      feeOptionOf(current) !== method ? await this.fees.compute(tenant, new Money(current.amount), method, current.currency) : null;

    // 1. Record the attempt (short transaction, committed before the processor is called).
    return this.orm.em.fork().transactional(async (em) => {
      const order = await em.findOne(Order, { environment: tenant.environmentId, reference }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!order) throw orderNotFound();
      // Nothing else is loaded: the link (with its type) is read under its lock by the link rules; the customer's id is the order's.
      assertOrderPayable(order);
      const link = order.paymentLink ? await this.settlement.lockLinkRules(em, order, 'attempt') : null;
      const threeDSecure = link?.authOption !== 'NOAUTH';
      if (quote && feeOptionOf(order) !== method) this.applyFee(em, order, quote);

      const payment = this.settlement.beginAttempt(em, order, {
        method,
        actor: 'pay_request',
        instrument: card ? `${card.brand} ${card.firstSix}******${card.lastFour}` : 'PayPal',
      });
      if (card) {
        // Token and issuer are the processor's: filled in when it answers.
        em.create(CardDetail, {
          orderPayment: payment,
          environment: order.environment,
          status: false,
          country,
          cardToken: null,
          cardExpiryMonth: card.expiryMonth,
          cardExpiryYear: card.expiryYear,
          cardType: card.brand,
          cardIssuer: '',
          cardFirstSixDigits: card.firstSix,
          cardLastFourDigits: card.lastFour,
        });
      }
      const started = attemptStartedEntry(method, payment.reference);
      this.timeline.record(em, order, started.event, 'system', started.description, started.metadata);
      await em.flush();
      return {
        paymentId: payment.id,
        orderId: order.id,
        key: payment.reference,
        amount: order.totalChargedAmount,
        currency: order.currency,
        processorReference: order.processorReference,
        threeDSecure,
      };
    });
  }

  /** Public: the 3-D Secure / PayPal pages look up a payment by its unguessable reference, for their own method only. */
  async findAuthenticationPage(paymentReference: string, method: PaymentMethod): Promise<{ order: Order; payment: OrderPayment; merchantName: string } | null> {
    const em = this.orm.em.fork();
    const payment = await em.findOne(
      OrderPayment,
      { reference: paymentReference },
      { populate: ['order', 'order.environment', 'order.environment.subsidiary'] },
    );
    if (!payment || methodOfOption(payment.paymentOptionId) !== method) return null;
    return { order: payment.order, payment, merchantName: payment.order.environment.subsidiary.name };
  }

  /**
   * The cardholder answered an authentication page. The proof must be of the payment's own
   * method (a one-time password for a card, a decision for PayPal): anything else is
   * "not found" and changes nothing. The answer goes to the processor outside any
   * transaction; only its result settles the payment.
   */
  async completeAuthentication(paymentReference: string, proof: AuthenticationProof): Promise<AuthenticationOutcome> {
    const actor: Extract<PaymentActor, 'otp_page' | 'paypal_page'> = proof.method === 'C' ? 'otp_page' : 'paypal_page';
    const step = (await this.plain.resume(paymentReference, proof.method, actor)) ?? (await this.resumeAttempt(paymentReference, proof, actor));

    if (step.kind === 'call') {
      const processor = requireProcessorFor(this.processors, step.mode);
      const result =
        proof.method === 'C'
          ? await processor.completeChallenge(paymentReference, step.token, proof.otp)
          : await processor.completePaypal(paymentReference, step.token, proof.approve);
      const { aggregate } = await this.settle(step.paymentId, result, step.orderId, step.carried);
      return outcomeOf(aggregate.order);
    }
    if (step.kind === 'wait') await this.waitWhileProcessing(paymentReference);
    // Expired as the clock would: the challenge closed at the processor first, or settled from its record when the answer got there.
    if (step.kind === 'expired') await this.jobs.expireAuthentication({ id: step.paymentId, reference: step.reference, mode: step.mode });
    return outcomeOf((await this.orm.em.fork().findOneOrFail(OrderPayment, { reference: paymentReference }, { populate: ['order'] })).order);
  }

  /** An authentication page's answer through the entity manager (the plain path leaves it an expired authentication). */
  private async resumeAttempt(paymentReference: string, proof: AuthenticationProof, actor: 'otp_page' | 'paypal_page'): Promise<ResumeStep> {
    return this.orm.em.fork().transactional(async (em): Promise<ResumeStep> => {
      const found = await em.findOne(OrderPayment, { reference: paymentReference });
      if (!found || methodOfOption(found.paymentOptionId) !== proof.method) throw notFound(AUTHENTICATION_NOT_FOUND, '404');
      const { order, payment } = await this.settlement.lockAttempt(em, found.id, found.order.id);
      if (payment.statusId === OrderStatus.Processing) return { kind: 'wait' as const };
      if (payment.statusId !== OrderStatus.PendingAuthentication) return { kind: 'done' as const };
      if (payment.authenticationExpiresAt && payment.authenticationExpiresAt.getTime() <= this.clock.now().getTime())
        return { kind: 'expired' as const, paymentId: payment.id, reference: payment.reference, mode: order.environment.mode };
      this.settlement.resumeAttempt(order, payment, actor, proof.method);
      await em.flush();
      return { kind: 'call' as const, paymentId: payment.id, orderId: order.id, mode: order.environment.mode, token: payment.processorToken! };
    });
  }

  /**
   * Fails unfinished authentications and unpaid payment-link orders past their deadlines
   * (payment-jobs.ts), and voids authorizations left uncaptured past AUTHORIZATION_TTL_HOURS.
   */
  async expireStaleAuthentications(limit = 100): Promise<number> {
    // Both halves run even when one fails; the first failure is then reported.
    let expired = 0;
    let failure: { err: unknown } | null = null;
    for (const sweep of [() => this.jobs.expireStaleAuthentications(limit), () => this.captures.expireAuthorizations(limit)]) {
      try {
        expired += await sweep();
      } catch (err) {
        failure ??= { err };
      }
    }
    if (failure) throw failure.err;
    return expired;
  }

  /**
   * Settles attempts interrupted between processor call and settlement, and captures and voids
   * whose answer was lost, from the processor's record (payment-jobs.ts, capture.service.ts).
   */
  /** Hears a background step that failed for one attempt, action or order (the sweep goes on; it is tried again at the next run). */
  hearFaults(hear: StepFault): void {
    this.jobs.onFault = hear;
    this.captures.onFault = hear;
  }

  async reconcileInterruptedAttempts(limit = 100): Promise<number> {
    return (await this.jobs.reconcileInterruptedAttempts(limit)) + (await this.captures.reconcilePending(limit));
  }

  /** The order's fee becomes the fee of the option actually paid with; the timeline keeps both. */
  private applyFee(em: EntityManager, order: Order, quote: FeeQuote): void {
    const before = { paymentOption: feeOptionOf(order), fee: order.fee, totalChargedAmount: order.totalChargedAmount };
    order.fee = quote.fee;
    order.feeRate = quote.feeRate;
    order.subsidiaryFee = quote.subsidiaryFee;
    order.customerFee = quote.customerFee;
    order.totalChargedAmount = quote.totalChargedAmount;
    const after = { paymentOption: quote.paymentOption, fee: quote.fee, totalChargedAmount: quote.totalChargedAmount };
    this.timeline.record(
      em,
      order,
      TimelineEvents.feeChanged,
      'system',
      `Fee changed from ${before.fee} (${PAYMENT_OPTION_LABELS[before.paymentOption]}) to ${after.fee} (${PAYMENT_OPTION_LABELS[after.paymentOption]})`,
      { from: before, to: after },
    );
  }

  private authenticationUrl(payment: OrderPayment): string {
    return authenticationPageUrl(this.publicUrl, payment);
  }

  /** Another submission of the same page is with the processor: wait (bounded) for its result. */
  private async waitWhileProcessing(reference: string, maxMs = 10_000): Promise<void> {
    const end = Date.now() + maxMs;
    while (Date.now() < end) {
      const rows: Array<{ status_id: number }> = await this.orm.em
        .getConnection()
        .execute('select status_id from order_payment where reference = ?', [reference]);
      if (rows[0]?.status_id !== OrderStatus.Processing) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** The option the order's current fee was computed for: card at creation, then the option paid with. */
function feeOptionOf(order: Pick<Order, 'paymentMethod'>): PaymentMethod {
  return order.paymentMethod === 'PAYPAL' ? 'PAYPAL' : 'C';
}

function outcomeOf(order: Order): AuthenticationOutcome {
  const status =
    order.statusId === OrderStatus.Successful
      ? 'successful'
      : order.statusId === OrderStatus.Authorized
        ? 'authorized'
        : isFinalStatus(order.statusId)
          ? 'failed'
          : 'processing';
  return { order, redirectUrl: merchantRedirect(order), status };
}

/** The merchant's RedirectUrl with `reference` and `status` (successful, authorized or failed) added. */
export function merchantRedirect(order: Order): string {
  const url = new URL(order.redirectUrl);
  url.searchParams.set('reference', order.reference);
  url.searchParams.set(
    'status',
    order.statusId === OrderStatus.Successful ? 'successful' : order.statusId === OrderStatus.Authorized ? 'authorized' : 'failed',
  );
  return url.toString();
}
