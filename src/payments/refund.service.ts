import { eachApart } from '../shared/each-apart';
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { isUniqueViolation, sqlRunner, sqlTransactions, type RunSql, type SqlTransaction } from '../db/sql';
import { formatMoney, Money } from '../shared/money';
import type { Tenant } from '../merchants/tenant';
import { authorize } from '../merchants/authorization';
import { AuditActions, auditEntryFor, type AuditService } from '../merchants/audit/audit.service';
import { Order } from '../orders/order.entity';
import { OrderStatus, orderNotFound, type OrderStatusId } from '../orders/order-status';
import { TimelineEvents } from '../timeline/timeline.service';
import type { OutboxService } from '../events/outbox.service';
import { newRefundStatus, REFUNDABLE_ORDER_STATUSES } from './payment-state';
import {
  notAvailableInLiveMode,
  processorCallClock,
  processorFor,
  recordOfKey,
  type PaymentProcessors,
  type RefundRequest,
  type RefundResult,
} from './processor';
import { Refund } from './refund.entity';
import { refundView, type RefundView } from './refund-view';
import { RefundSettlement, type RefundToSettle } from './refund-settlement';
import { RefundQueries } from './refund.queries';
import { idempotencyKeyReused, readRefundInput, refundAmountInvalid, refundNotAllowed, type RefundOrderInput, type RefundRequestInput } from './refund-input';

export interface RefundServiceOptions {
  /** A refund the processor has no record of after this long never reached it: it fails, and no money moved. */
  processorDeadlineMs?: number;
  /** Refunds younger than this are left to the request that is still handling them. */
  reconcileGraceMs?: number;
}

/** An order's refunds, oldest first, the sum of those SUCCEEDED, and what a refund may still take. */
export interface OrderRefunds {
  refunds: RefundView[];
  amountRefunded: string;
  /** The order's balance while it may be refunded, else zero: the most a refund asked now may take. */
  amountRefundable: string;
}

/** The SUCCEEDED refunds of one currency over a period: how many and how much. */
export interface RefundedVolume {
  currency: string;
  count: number;
  amount: string;
}

/** The failure reason of a refund whose call never reached the processor (found out by reconciliation). */
export const REFUND_NOT_PROCESSED = 'Refund not processed';

const DEFAULT_PROCESSOR_DEADLINE_MS = 120_000;
const DEFAULT_RECONCILE_GRACE_MS = 5_000;
const IDEMPOTENCY_CONSTRAINT = 'refund_environment_idempotency_key_unique';

type Recorded = { kind: 'earlier'; view: RefundView } | { kind: 'call'; recorded: RefundToSettle; request: RefundRequest };

/**
 * Refunds of paid orders: the rules (the order Successful, the amount within its balance, the
 * idempotency key) and the flow. As for payments, no processor call is made inside a database
 * transaction: (1) under the order's row lock, the refund is checked against the balance and
 * recorded PENDING with its timeline entry and audit entry, committed; (2) the processor is
 * called with the refund's id as idempotency key; (3) its answer settles the refund through the
 * transitions table (refund-settlement.ts). A crash between (2) and (3) leaves the refund
 * PENDING; `reconcilePendingRefunds` (the scheduler) asks the processor by the refund's id.
 */
export class RefundService {
  private readonly settlement: RefundSettlement;
  private readonly queries: RefundQueries;
  private readonly run: RunSql;
  private readonly transaction: SqlTransaction;
  private readonly processorDeadlineMs: number;
  private readonly reconcileGraceMs: number;
  /** Hears a processor call or a reconciliation that failed (the refund stays PENDING until reconciled); set by the composition root to log it. */
  onFault: (err: unknown, refundId: string) => void = () => undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly processors: PaymentProcessors,
    outbox: OutboxService,
    private readonly audit: AuditService,
    wakeWebhooks: () => void,
    options: RefundServiceOptions = {},
  ) {
    this.queries = new RefundQueries(orm);
    this.run = sqlRunner(orm);
    this.transaction = sqlTransactions(orm);
    this.settlement = new RefundSettlement(orm, this.queries, outbox, wakeWebhooks);
    this.processorDeadlineMs = options.processorDeadlineMs ?? DEFAULT_PROCESSOR_DEADLINE_MS;
    this.reconcileGraceMs = options.reconcileGraceMs ?? DEFAULT_RECONCILE_GRACE_MS;
  }

  /**
   * Refunds a Successful order in full (no amount: all that remains) or in part. Answers the
   * refund settled when the processor answered within the request, else PENDING. The same
   * idempotency key with the same order and amount answers the first refund and refunds nothing more.
   */
  async refundOrder(tenant: Tenant, raw: RefundOrderInput): Promise<RefundView> {
    authorize(tenant, 'payments.write');
    const processor = processorFor(this.processors, tenant.mode);
    if (!processor) throw notAvailableInLiveMode();
    const input = readRefundInput(raw);

    const recorded = await this.record(tenant, input);
    if (recorded.kind === 'earlier') return recorded.view;

    let result: RefundResult;
    try {
      result = await processor.refund(recorded.request);
    } catch (err) {
      // The processor may or may not have it: the refund stays PENDING, settled later from its record.
      const { refund, orderReference } = recorded.recorded;
      this.onFault(err, refund.id);
      return refundView(refund, orderReference);
    }
    return (await this.settlement.settle(recorded.recorded.refund.id, result, 'processor', recorded.recorded)).view;
  }

  /** The order's refunds, oldest first, how much of them SUCCEEDED, and how much a refund may still take. */
  async forOrder(tenant: Tenant, reference: string): Promise<OrderRefunds> {
    authorize(tenant, 'read');
    // A missing reference is an unknown order, not an order without refunds.
    if (typeof reference !== 'string' || reference === '') throw orderNotFound();
    const em = this.orm.em.fork();
    const refunds = await em.find(Refund, { environment: tenant.environmentId, order: { reference } }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    const amountRefunded = refunds.filter((r) => r.status === 'SUCCEEDED').reduce((sum, r) => sum.plus(r.amount), new Money(0));
    const order = await em.findOne(Order, { environment: tenant.environmentId, reference }, { fields: ['id', 'statusId'] });
    const standing = order ? await this.queries.standing(this.run, { id: order.id, environmentId: tenant.environmentId }, OrderStatus.Successful) : null;
    const refundable = order && standing && refundRefusal(order.statusId, standing.openDisputes) === null ? standing.balance : new Money(0);
    return {
      refunds: refunds.map((r) => refundView(r, reference)),
      amountRefunded: amountRefunded.toFixed(2),
      amountRefundable: refundable.toDecimalPlaces(2, Money.ROUND_DOWN).toFixed(2),
    };
  }

  /** The SUCCEEDED refunds asked for in [from, to), by currency (the dashboard's refunded volume). */
  async refundedVolume(tenant: Tenant, from: Date, to: Date): Promise<RefundedVolume[]> {
    authorize(tenant, 'read');
    const rows: Array<{ currency: string; count: number; amount: string }> = await this.orm.em.getConnection().execute(
      `select currency, count(*)::int as count, sum(amount) as amount from refund
        where environment_id = ? and status = 'SUCCEEDED' and created_at >= ? and created_at < ? group by currency order by currency`,
      [tenant.environmentId, from, to],
    );
    return rows.map((r) => ({ currency: r.currency, count: r.count, amount: new Money(r.amount).toFixed(2) }));
  }

  /**
   * Settles refunds left PENDING by a crash (or a processor that did not answer) from the
   * processor's record, looked up by the refund's id; a refund of which the processor has no
   * record once the deadline has passed never reached it: its key is closed at the processor (a
   * call still on its way is then refused there) and it fails (no money moved). Refunds
   * younger than a few seconds are left to their request. Ages are real elapsed time. Returns
   * how many were settled.
   */
  async reconcilePendingRefunds(limit = 100): Promise<number> {
    const rows: Array<{ id: string; created_at: Date; mode: Tenant['mode'] }> = await this.orm.em
      .getConnection()
      .execute(
        `select r.id, r.created_at, e.mode from refund r join app_environment e on e.id = r.environment_id where r.status = 'PENDING' order by r.created_at limit ?`,
        [limit],
      );
    return eachApart(
      rows,
      async (row) => {
        const processor = processorFor(this.processors, row.mode);
        const age = processorCallClock().getTime() - new Date(row.created_at).getTime();
        if (!processor || age < this.reconcileGraceMs) return false;
        const result: RefundResult | null = await recordOfKey(processor, row.id, (key) => processor.lookupRefund(key), age >= this.processorDeadlineMs, {
          kind: 'failed',
          reference: null,
          reason: REFUND_NOT_PROCESSED,
        });
        return result !== null && (await this.settlement.settle(row.id, result, 'reconciliation')).changed;
      },
      // One refund that cannot be settled now (the processor unreachable, its record unusable) does not hold up the others.
      (err, row) => this.onFault(err, row.id),
    );
  }

  /**
   * Step 1: the refund checked and recorded PENDING (or the earlier refund of the same key),
   * committed: the order locked (with the key's earlier refund), what decides the refund read
   * after the lock, the refund and its timeline entry written, the audit entry.
   */
  private async record(tenant: Tenant, input: RefundRequestInput): Promise<Recorded> {
    try {
      return await this.transaction((run) => this.recordIn(run, tenant, input));
    } catch (err) {
      // The same key used at the same moment on another order: the other request's refund won.
      if (!isUniqueViolation(err, IDEMPOTENCY_CONSTRAINT)) throw err;
      const earlier = await this.queries.byKey(this.run, tenant.environmentId, input.idempotencyKey!);
      return { kind: 'earlier', view: sameRequestOrRefuse(earlier!.refund, earlier!.orderReference, input) };
    }
  }

  private async recordIn(run: RunSql, tenant: Tenant, input: RefundRequestInput): Promise<Recorded> {
    // The order's row lock: concurrent refunds of one order are checked against the balance one at a time.
    const order = await this.queries.lockOrder(run, tenant.environmentId, input.reference);
    if (!order) throw orderNotFound();
    // Read after the lock was granted: it sees every refund committed by those that held it (and the key's, if one of them used it).
    const standing = await this.queries.standing(run, { id: order.id, environmentId: tenant.environmentId }, OrderStatus.Successful, input.idempotencyKey);
    if (standing.earlier) return { kind: 'earlier', view: sameRequestOrRefuse(standing.earlier.refund, standing.earlier.orderReference, input) };
    const refusal = refundRefusal(order.statusId, standing.openDisputes);
    if (refusal !== null) throw refundNotAllowed(refusal);

    const { balance } = standing;
    const amount = input.amount ?? balance.toDecimalPlaces(2, Money.ROUND_DOWN);
    if (amount.lte(0)) throw refundAmountInvalid('Nothing is left to refund on this order.');
    if (amount.gt(balance)) throw refundAmountInvalid(`The amount must be at most the balance of the order, ${formatMoney(balance, order.currency)}.`);

    const id = randomUUID();
    const money = formatMoney(amount, order.currency);
    const refund = await this.queries.insert(run, {
      id,
      orderId: order.id,
      environmentId: tenant.environmentId,
      amount: amount.toFixed(2),
      currency: order.currency,
      status: newRefundStatus('refund_request'),
      reason: input.reason,
      idempotencyKey: input.idempotencyKey,
      requestedAmount: input.amount?.toFixed(2) ?? null,
      at: new Date(),
      entry: {
        event: TimelineEvents.refundRequested,
        description: `Refund of ${money} requested`,
        metadata: { refundId: id, amount: amount.toFixed(2), currency: order.currency, reason: input.reason },
      },
    });
    await this.audit.recordWith(run, auditEntryFor(tenant, AuditActions.refundCreated, `refund ${id} of order ${order.reference} for ${money}`));
    return {
      kind: 'call',
      recorded: { refund, orderReference: order.reference },
      request: {
        // The payment refunded: the order's approved attempt, by the token the processor gave it.
        paymentToken: standing.paymentToken,
        amount: amount.toFixed(2),
        currency: order.currency,
        reference: order.processorReference,
        idempotencyKey: id,
      },
    };
  }
}

/**
 * Why no refund of the order may be asked now, or null when one may: the one rule both a refund
 * request and the order's refundable amount follow. Only a Successful order is refunded, and not
 * while the cardholder's bank disputes the payment (the money is then the dispute's to settle).
 */
function refundRefusal(statusId: OrderStatusId, openDisputes: number): string | null {
  if (!REFUNDABLE_ORDER_STATUSES.includes(statusId)) return 'Only a Successful order can be refunded.';
  if (openDisputes > 0) return 'A dispute of this order is open: it cannot be refunded until the dispute is decided.';
  return null;
}

/** An earlier refund of the same idempotency key: answered again when asked of the same order and amount, else refused. */
function sameRequestOrRefuse(earlier: Refund, orderReference: string, input: RefundRequestInput): RefundView {
  const asked = earlier.requestedAmount === null ? null : new Money(earlier.requestedAmount);
  const sameAmount = asked === null ? input.amount === null : input.amount !== null && asked.eq(input.amount);
  if (orderReference !== input.reference || !sameAmount) throw idempotencyKeyReused();
  return refundView(earlier, orderReference);
}
