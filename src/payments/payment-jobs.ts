import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import type { Clock } from '../shared/clock';
import { Order } from '../orders/order.entity';
import { OrderStatus } from '../orders/order-status';
import { OrderPayment } from '../orders/order-payment.entity';
import type { OrderStatusChange } from '../events/order-status-bus';
import { NOT_PROCESSED, processorCallClock, processorFor, recordOfKey, ResponseCodes, type PaymentProcessors, type ProcessorResult } from './processor';
import type { PaymentSettlement } from './settlement';
import type { EnvironmentMode } from '../merchants/app-environment.entity';
import { methodOfOption } from './payment-state';
import { eachApart } from '../shared/each-apart';
import { ProcessorUnavailableError } from './processor-time-limit';

export interface PaymentJobOptions {
  /**
   * An attempt the processor has no record of after this long never reached it: it is failed
   * (`Z5`). Also how long a completion the processor still shows as pending is left alone.
   */
  processorDeadlineMs: number;
  /** Attempts younger than this are left to the request that is still handling them. */
  reconcileGraceMs: number;
}

/** An attempt awaiting its cardholder's authentication (3-D Secure, PayPal), as its challenge is closed by. */
export interface UnfinishedAuthentication {
  id: number;
  reference: string;
  mode: EnvironmentMode;
}

/** Hears one background step that failed (the attempt, action or order it was for); the others go on, and it is tried again at the next run. */
export type StepFault = (err: unknown, subject: Record<string, number>) => void;

/**
 * The payment engine's background work (run at start and by the scheduler): attempts
 * interrupted between the processor call and their settlement are settled from the
 * processor's record; unfinished authentications and unpaid payment-link orders expire. Each
 * change is made by the settlement, under the row locks, once, so several instances may run
 * these at the same time.
 */
export class PaymentJobs {
  /** Set by the composition root to log it. */
  onFault: StepFault = () => undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly settlement: PaymentSettlement,
    private readonly processors: PaymentProcessors,
    private readonly clock: Clock,
    private readonly options: PaymentJobOptions,
  ) {}

  /**
   * Fails every authentication left unfinished past its deadline, and every payment-link
   * order left unpaid past its expiry. Returns how many were failed (or settled). An
   * authentication's challenge is closed at the processor first (endAuthentication).
   */
  async expireStaleAuthentications(limit = 100): Promise<number> {
    const now = this.clock.now();
    const connection = this.orm.em.getConnection();
    const payments = await this.unfinishedAuthentications('p.authentication_expires_at <= ? order by p.authentication_expires_at limit ?', [now, limit]);
    let expired = await eachApart(
      payments,
      (row) => this.expireAuthentication(row),
      (err, { id }) => this.onFault(err, { paymentId: id }),
    );
    const orders: Array<{ id: number }> = await connection.execute(
      `select id from checkout_order where status_id = ${OrderStatus.Initiated} and expires_at <= ? order by expires_at limit ?`,
      [now, limit],
    );
    expired += await eachApart(
      orders,
      ({ id }) =>
        this.inTransaction(async (em, changes) => {
          const order = await em.findOneOrFail(
            Order,
            { id },
            { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, populate: ['environment'], strategy: 'select-in' },
          );
          if (order.statusId !== OrderStatus.Initiated || !order.expiresAt || order.expiresAt > this.clock.now()) return false;
          await this.settlement.expireUnpaidOrder(em, order, changes);
          return true;
        }),
      (err, { id }) => this.onFault(err, { orderId: id }),
    );
    return expired;
  }

  /** One expired authentication (see expireStaleAuthentications); also the page's, when it is answered past the deadline. Answers whether it changed. */
  expireAuthentication(attempt: UnfinishedAuthentication): Promise<boolean> {
    return this.endAuthentication(
      attempt,
      'expiry',
      (payment) => payment.authenticationExpiresAt !== null && payment.authenticationExpiresAt <= this.clock.now(),
    );
  }

  /**
   * The unauthenticated attempt of order `orderId` stands in the way of a newer attempt on the
   * same link: it fails as superseded (`Z3`), its challenge closed at the processor. When the
   * cardholder's answer had reached the processor first, the processor's record settles it
   * instead: an approval pays the link, and the newer attempt is then refused. Answers whether
   * it changed the attempt (not when its page is being answered at this moment).
   */
  async supersedeAttempt(orderId: number): Promise<boolean> {
    const [attempt] = await this.unfinishedAuthentications('p.order_id = ?', [orderId]);
    return attempt !== undefined && (await this.endAuthentication(attempt, 'supersede', () => true));
  }

  /** The attempts awaiting authentication that also match `where` (its `?` taking `params`). */
  private unfinishedAuthentications(where: string, params: unknown[]): Promise<UnfinishedAuthentication[]> {
    return this.orm.em.getConnection().execute(
      `select p.id, p.reference, e.mode from order_payment p join checkout_order o on o.id = p.order_id join app_environment e on e.id = o.environment_id
        where p.status_id = ${OrderStatus.PendingAuthentication} and ${where}`,
      params,
    );
  }

  /**
   * Ends an authentication before its cardholder finished it:
   * 1. the attempt is claimed (Processing, under its locks) while it still awaits authentication
   *    and `mayEnd` holds: a page answered from then on waits for the outcome, and one answered
   *    first is left alone;
   * 2. its challenge is closed at the processor (no transaction open) with the reason (`Z2`
   *    expired, `Z3` superseded), so an answer can no longer complete it there; the close is the
   *    processor's answer, settling the attempt Failed with that reason;
   * 3. when the cardholder's answer had reached the processor first (a page's call whose response
   *    was lost), the processor's record settles the attempt instead.
   * A close that fails (the processor unreachable) releases the claim: the attempt awaits its
   * cardholder again, as before, and the error is the caller's (for a supersession, as
   * ProcessorUnavailableError: the newer attempt's pay recorded nothing). Had the close reached the
   * processor after all, its record (declined, with the reason) settles the attempt at the next
   * try, or the page's answer is declined there.
   */
  private async endAuthentication(
    { id, reference, mode }: UnfinishedAuthentication,
    actor: 'expiry' | 'supersede',
    mayEnd: (payment: OrderPayment) => boolean,
  ): Promise<boolean> {
    const claimed = await this.inTransaction(async (em) => {
      const { order, payment } = await this.settlement.lockAttempt(em, id);
      if (payment.statusId !== OrderStatus.PendingAuthentication || !mayEnd(payment)) return null;
      this.settlement.resumeAttempt(order, payment, actor, methodOfOption(payment.paymentOptionId));
      await em.flush();
      return { token: payment.processorToken, at: payment.processingStartedAt };
    });
    if (!claimed) return false;
    const processor = processorFor(this.processors, mode);
    const reason = actor === 'expiry' ? ResponseCodes.authenticationExpired : ResponseCodes.superseded;
    // A supersession runs inside a newer attempt's pay, before anything of that pay is recorded: its processor failures say so.
    const processorFailed = (err: unknown) => (actor === 'supersede' ? new ProcessorUnavailableError(err) : err);
    let closed = true;
    try {
      if (processor) closed = await processor.closeKey(reference, { expireChallenge: reason });
    } catch (err) {
      await this.inTransaction(async (em) => {
        const { order, payment } = await this.settlement.lockAttempt(em, id);
        if (payment.statusId !== OrderStatus.Processing || payment.processingStartedAt?.getTime() !== claimed.at?.getTime()) return;
        this.settlement.releaseClaim(order, payment, actor, methodOfOption(payment.paymentOptionId));
        await em.flush();
      });
      throw processorFailed(err);
    }
    if (closed || !processor) return this.settlement.settleAttempt(id, { kind: 'declined', token: claimed.token, issuer: '', ...reason }, 'processor');
    const record = await processor.lookup(reference).catch((err: unknown) => {
      throw processorFailed(err);
    });
    // A challenge the processor would not close stays with reconciliation (it hands it back to its page at the processor deadline).
    return record !== null && record.kind !== 'challenge' && (await this.settlement.settleAttempt(id, record, 'reconciliation'));
  }

  /**
   * Settles attempts left Processing by a crash (or a processor that did not answer), from
   * the processor's own record of them, looked up by their idempotency key:
   * - a final answer is applied at once;
   * - a pending challenge of a first call is applied at once (the customer may authenticate);
   *   one of a page's completion is left to that page until the processor deadline passes;
   * - no record at all, once the deadline has passed: the call never reached the processor; its
   *   key is closed there (a call still on its way is refused), the attempt fails (`Z5`), and no
   *   money moved.
   * Attempts younger than a few seconds are left to the request handling them. Ages are real
   * elapsed time (processor calls take real time), not the business clock.
   * Returns how many attempts were settled.
   */
  async reconcileInterruptedAttempts(limit = 100): Promise<number> {
    const rows: Array<{ id: number }> = await this.orm.em
      .getConnection()
      .execute(`select id from order_payment where status_id = ${OrderStatus.Processing} order by processing_started_at nulls first limit ?`, [limit]);
    return eachApart(
      rows,
      ({ id }) => this.reconcileAttempt(id),
      (err, { id }) => this.onFault(err, { paymentId: id }),
    );
  }

  private async reconcileAttempt(id: number): Promise<boolean> {
    const payment = await this.orm.em.fork().findOne(OrderPayment, { id }, { populate: ['order', 'order.environment'] });
    if (!payment || payment.statusId !== OrderStatus.Processing) return false;
    const processor = processorFor(this.processors, payment.order.environment.mode);
    if (!processor) return false;
    const age = processorCallClock().getTime() - (payment.processingStartedAt ?? payment.dateUpdated).getTime();
    if (age < this.options.reconcileGraceMs) return false;
    const overdue = age >= this.options.processorDeadlineMs;
    const record = await recordOfKey<ProcessorResult>(processor, payment.reference, (key) => processor.lookup(key), overdue, NOT_PROCESSED);
    // A pending challenge of a page's completion is left to that page until the deadline.
    const result = record && (record.kind !== 'challenge' || payment.processorToken === null || overdue) ? record : null;
    return result !== null && (await this.settlement.settleAttempt(id, result, 'reconciliation'));
  }

  /** One change in its own transaction; its events and outcomes are reported once it committed. */
  private async inTransaction<T>(work: (em: EntityManager, changes: OrderStatusChange[]) => Promise<T>): Promise<T> {
    const changes: OrderStatusChange[] = [];
    const result = await this.orm.em.fork().transactional((em) => work(em, changes));
    this.settlement.committed(changes);
    return result;
  }
}
