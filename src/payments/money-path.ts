import type { MikroORM } from '@mikro-orm/postgresql';
import { isDeadlock, sqlRunner, sqlTransactions, type RunSql, type SqlTransaction } from '../db/sql';
import { notFound } from '../shared/errors';
import type { Clock } from '../shared/clock';
import { Money } from '../shared/money';
import type { Tenant } from '../merchants/tenant';
import type { EnvironmentMode } from '../merchants/app-environment.entity';
import type { OrderPayment } from '../orders/order-payment.entity';
import { OrderStatus, orderNotFound } from '../orders/order-status';
import type { OrderAggregate, OrderService } from '../orders/order.service';
import { TimelineEvents } from '../timeline/timeline.service';
import type { OutboxService } from '../events/outbox.service';
import type { OrderStatusChange } from '../events/order-status-bus';
import type { FeeService } from '../fees/fee.service';
import { checkLockedLink } from '../links/link-usage';
import { assertOrderPayable, type ValidCard } from './pay-validation';
import { ResponseCodes, type ProcessorResult } from './processor';
import { methodOfOption, type PaymentMethod } from './payment-state';
import {
  attemptStartedEntry,
  authenticationEntry,
  awaitAuthentication,
  endAttempt,
  resumeAttemptRows,
  startAttempt,
  takeProcessorDetails,
  type TimelineEntry,
} from './attempt-rules';
import { PaymentQueries } from './payment.queries';
import type { ReadAttempt } from './payment-rows';
import type { PaymentSettlement } from './settlement';
import { Listeners } from '../shared/listeners';

/** The authentication page of a payment attempt was asked for under the other method's address. */
export const AUTHENTICATION_NOT_FOUND = 'Authentication not found';

/** An attempt recorded and committed: what the processor call needs. */
export interface RecordedAttempt {
  paymentId: number;
  orderId: number;
  /** The payment's reference: the idempotency key of every processor call made for it. */
  key: string;
  amount: string;
  currency: string;
  processorReference: string;
  threeDSecure: boolean;
  /** The rows as the attempt left them (plain path only): its settlement starts from them instead of reading them again. */
  carried?: CarriedAttempt;
}

/** An attempt's rows as its own write answered them, with what was read beside: what a settlement would read next. */
export type CarriedAttempt = ReadAttempt;

/** What an authentication page's answer does next: call the processor, wait for another submission's call, or nothing (already over). */
export type ResumeStep =
  | { kind: 'wait' }
  | { kind: 'done' }
  /** Past its deadline: expired as the clock does it (its challenge closed at the processor first). */
  | { kind: 'expired'; paymentId: number; reference: string; mode: EnvironmentMode }
  | { kind: 'call'; paymentId: number; orderId: number; mode: EnvironmentMode; token: string; carried?: CarriedAttempt };

export interface Settled {
  changed: boolean;
  aggregate: OrderAggregate;
  payment: OrderPayment;
}

/** Thrown inside a plain transaction (rolled back) when the case is not the common one: the entity-manager path takes it whole. */
class NotTheCommonCase extends Error {}
const elsewhere = () => new NotTheCommonCase('handled by the entity-manager path');

/** A guarded write found a row changed since it was read: nothing was written. */
const CHANGED = Symbol('changed since read');
type Attempted<T> = T | typeof CHANGED;
/**
 * Which write of the money path found a row changed since its read (`capture_void`: a capture's or
 * void's settlement, action-settlement.ts; `capture_void_claim`: a merchant's capture or void
 * claimed from rows read without locks, capture.service.ts).
 */
export type GuardedStep = 'attempt' | 'settlement' | 'resume' | 'capture_void' | 'capture_void_claim';

/**
 * The common money path in prepared plain SQL (payment.queries.ts): a card pay's attempt, the
 * settlement of a processor's answer, and an authentication page's answer, with the same rows,
 * events and rules as the entity-manager path (settlement.ts). The rules are attempt-rules.ts',
 * applied to plain rows.
 *
 * An attempt, a settlement and an authentication page's answer are first tried optimistically:
 * one read without locks, the rules, then one write that locks the rows it was decided on
 * (order, payment, link, in the usual order) and writes nothing unless each is still as read
 * (WriteGuard: their row versions). Each write is its own transaction, and no lock is held while
 * the rules run. When the guard finds a row changed (a concurrent pay, settlement, expiry, link
 * change) or the write was chosen as a deadlock's victim, the same work runs again in one
 * transaction of a locking read and the same write, which decides on the rows as they are now.
 * The attempt's and the resume's writes answer the rows they wrote; the settlement that follows
 * in the same request starts from them instead of reading them again. Those carried rows include
 * what was read beside the guarded ones (the customer, the order's earlier payments): as the
 * settlement shows them in its event, they are as of the attempt, not of the processor's answer.
 *
 * What is not the common case is left to the entity-manager path, untouched: nothing was written
 * (a locking transaction here is rolled back), and the method answers null. That is a
 * PayPal pay; a fee to recompute (the order's fee is another option's); a link that can be used
 * up (single charge, Limit: usage counts and supersession); an order captured later (MANUAL);
 * a subscription's order; a reconciliation; an attempt no longer Processing when its answer
 * lands; an authentication page answered after its deadline.
 */
export class PlainMoneyPath {
  private readonly queries: PaymentQueries;
  private readonly transaction: SqlTransaction;
  private readonly run: RunSql;
  private readonly conflictListeners = new Listeners<GuardedStep>();

  constructor(
    orm: MikroORM,
    private readonly settlement: PaymentSettlement,
    private readonly orders: OrderService,
    private readonly outbox: OutboxService,
    private readonly fees: FeeService,
    private readonly clock: Clock,
  ) {
    this.queries = new PaymentQueries(orm);
    this.transaction = sqlTransactions(orm);
    this.run = sqlRunner(orm);
  }

  private async plain<T>(work: (run: RunSql) => Promise<T>): Promise<T | null> {
    try {
      return await this.transaction(work);
    } catch (err) {
      if (err instanceof NotTheCommonCase) return null;
      throw err;
    }
  }

  /** Called with the step each time a guarded write found a row changed and the work goes to the locking transaction. */
  onGuardConflict(listener: (step: GuardedStep) => void): () => void {
    return this.conflictListeners.add(listener);
  }

  /** `work` without locks and a guarded write; when a row changed since its read, again in a locking transaction. */
  private async guardedThenLocked<T>(step: GuardedStep, work: (run: RunSql, locking: boolean) => Promise<Attempted<T>>): Promise<T | null> {
    let first: Attempted<T>;
    try {
      first = await work(this.run, false);
    } catch (err) {
      if (err instanceof NotTheCommonCase) return null;
      if (!isDeadlock(err)) throw err;
      first = CHANGED;
    }
    if (first !== CHANGED) return first;
    this.conflictListeners.emit(step);
    return this.plain(async (run) => {
      const again = await work(run, true);
      if (again === CHANGED) throw new Error('a money-path write found its locked rows changed');
      return again;
    });
  }

  /**
   * Records a card attempt on an order (the order and its link read, one guarded write), checked
   * as the entity-manager path checks it and in the same order: the order exists, the option is
   * payable for its amount, the order is payable, the link allows it.
   */
  async recordCardAttempt(tenant: Tenant, reference: string, method: PaymentMethod, country: string, card: ValidCard): Promise<RecordedAttempt | null> {
    if (method !== 'C') return null;
    // The fee settings read first: inside the transaction, a read on a second connection could
    // wait for a pool that transactions waiting for this one's locks hold.
    const assertPayable = await this.fees.payableRules(tenant);
    return this.guardedThenLocked('attempt', async (run, locking) => {
      const read = await this.queries.readForAttempt(run, locking, tenant.environmentId, reference);
      if (!read) throw orderNotFound();
      const { order, link, guard } = read;
      assertPayable(new Money(order.amount), method, order.currency);
      // The order's fee is the card's (computed at creation) unless it was paid with PayPal before.
      if (order.paymentMethod === 'PAYPAL') throw elsewhere();
      assertOrderPayable(order);
      if (link && checkLockedLink(link) === 'count usage') throw elsewhere();
      const payment = startAttempt(order, { method, actor: 'pay_request', instrument: `${card.brand} ${card.firstSix}******${card.lastFour}` });
      order.updatedAt = new Date();
      const written = await this.queries.insertAttempt(run, {
        orderId: order.id,
        environmentId: tenant.environmentId,
        order,
        payment: { ...payment, dateCreated: new Date() },
        // Token and issuer are the processor's: filled in when it answers.
        card: {
          country,
          cardExpiryMonth: card.expiryMonth,
          cardExpiryYear: card.expiryYear,
          cardType: card.brand,
          cardFirstSixDigits: card.firstSix,
          cardLastFourDigits: card.lastFour,
        },
        entry: attemptStartedEntry(method, payment.reference),
        guard,
      });
      if (written === null) return CHANGED;
      return {
        paymentId: written.payment.id,
        orderId: order.id,
        key: payment.reference,
        amount: order.totalChargedAmount,
        currency: order.currency,
        processorReference: order.processorReference,
        threeDSecure: link?.authOption !== 'NOAUTH',
        carried: {
          order: Object.assign(written.order, { customer: order.customer, paymentLink: link }),
          payment: written.payment,
          payments: [...read.payments, written.payment],
          cards: [...read.cards, written.card],
          subsidiaryId: tenant.subsidiaryId,
          mode: tenant.mode,
          link,
          guard: { orderXmin: written.orderXmin, paymentXmin: written.paymentXmin, linkId: guard.linkId, linkXmin: guard.linkXmin },
        },
      };
    });
  }

  /**
   * Applies the processor's answer to an attempt still Processing (order, payment and link read
   * with what the answer's event shows, one guarded write with the timeline, the outbox event, its
   * delivery and the NOTIFY); the outcome is announced after commit.
   */
  async settle(paymentId: number, orderId: number, result: ProcessorResult, carried?: CarriedAttempt): Promise<Settled | null> {
    let changes: OrderStatusChange[] = [];
    const settled = await this.guardedThenLocked('settlement', async (run, locking) => {
      changes = [];
      // The attempt's own rows, when this request wrote them: the guarded write checks they are still so.
      const locked = !locking && carried?.payment.id === paymentId ? carried : await this.queries.readForSettlement(run, locking, orderId, paymentId);
      if (!locked) throw new Error(`payment ${paymentId} is not of order ${orderId}`);
      const { order, payment, link } = locked;
      if (payment.statusId !== OrderStatus.Processing) throw elsewhere();
      if (order.captureMethod === 'MANUAL' || order.recurringPaymentId !== null || order.frequency !== null) throw elsewhere();
      const method = methodOfOption(payment.paymentOptionId);
      const card = locked.cards.find((c) => c.orderPayment.id === payment.id) ?? null;
      takeProcessorDetails(payment, card, result);
      const entries: TimelineEntry[] = [];
      let outcome: { status: 'pending' | 'successful' | 'failed'; code: string };
      if (result.kind === 'challenge') {
        awaitAuthentication(order, payment, 'processor', method, this.settlement.authenticationDeadline());
        outcome = { status: 'pending', code: ResponseCodes.pending.code };
      } else {
        const authenticated = authenticationEntry(payment, result);
        if (authenticated) entries.push(authenticated);
        if (result.kind === 'approved' && link) {
          // The processor has moved the money: a link disabled since the attempt started is recorded, the approval stands.
          try {
            if (checkLockedLink(link) === 'count usage') throw elsewhere();
          } catch (err) {
            if (err instanceof NotTheCommonCase) throw err;
            entries.push({
              event: TimelineEvents.linkRuleOverridden,
              description: `Approved by the processor although: ${(err as Error).message}`,
              metadata: { orderPaymentReference: payment.reference },
            });
          }
        }
        const ended = endAttempt(order, payment, card, result, 'processor', method, this.clock.now());
        entries.push(ended.entry);
        outcome = { status: ended.approved ? 'successful' : 'failed', code: result.code };
      }
      order.eventSequence += 1;
      order.updatedAt = payment.dateUpdated = new Date();
      const aggregate = await this.orders.aggregateOfRows(locked, locked.subsidiaryId, run);
      const { change, row } = await this.outbox.composeOrderChange(run, aggregate, outcome.status);
      if (!(await this.queries.writeSettlement(run, { order, payment, card, entries, event: row, guard: locked.guard }))) return CHANGED;
      changes.push(change);
      this.settlement.noteOutcome(changes, { method, ...outcome, actor: 'processor', environmentId: row.environmentId, reference: order.reference });
      return { changed: true, aggregate, payment };
    });
    if (settled) this.settlement.committed(changes);
    return settled;
  }

  /**
   * An authentication page's answer (order, payment and link read, one guarded write of order and
   * payment): the attempt goes back to the processor, unless it is with the processor already, or
   * over. The proof must be of the payment's own method, or nothing is found.
   */
  async resume(paymentReference: string, method: PaymentMethod, actor: 'otp_page' | 'paypal_page'): Promise<ResumeStep | null> {
    return this.guardedThenLocked('resume', async (run, locking) => {
      const locked = await this.queries.readForResume(run, locking, paymentReference);
      if (!locked || methodOfOption(locked.payment.paymentOptionId) !== method) throw notFound(AUTHENTICATION_NOT_FOUND, '404');
      const { order, payment } = locked;
      if (payment.statusId === OrderStatus.Processing) return { kind: 'wait' as const };
      if (payment.statusId !== OrderStatus.PendingAuthentication) return { kind: 'done' as const };
      // Past its deadline, the attempt expires: the entity-manager path does that.
      if (payment.authenticationExpiresAt && payment.authenticationExpiresAt.getTime() <= this.clock.now().getTime()) throw elsewhere();
      resumeAttemptRows(order, payment, actor, method);
      order.updatedAt = new Date();
      const written = await this.queries.writeResume(run, order, payment, locked.guard);
      if (written === null) return CHANGED;
      const carried: CarriedAttempt = {
        ...locked,
        order: Object.assign(written.order, { customer: order.customer, paymentLink: locked.link }),
        payment: written.payment,
        payments: locked.payments.map((p) => (p.id === written.payment.id ? written.payment : p)),
        guard: { ...locked.guard, orderXmin: written.orderXmin, paymentXmin: written.paymentXmin },
      };
      return { kind: 'call' as const, paymentId: payment.id, orderId: order.id, mode: locked.mode, token: payment.processorToken!, carried };
    });
  }
}
