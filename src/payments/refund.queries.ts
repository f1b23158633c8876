import type { MikroORM } from '@mikro-orm/postgresql';
import type { PreparedStatement, Row, RunSql } from '../db/sql';
import { EntityRowMapper } from '../db/row-mapper';
import { Money } from '../shared/money';
import type { OrderStatusId } from '../orders/order-status';
import { outboxEventParams, outboxEventSql, type OrderEventRow } from '../events/outbox.service';
import { OPEN_DISPUTE_STATUSES, type RefundStatus } from './payment-state';
import { Refund } from './refund.entity';

/**
 * What is taken off an order's `total_charged_amount` (alias `o`) to leave its balance: each a
 * SQL expression of the money that has left, or is leaving, the merchant for that order.
 */
const BALANCE_DEDUCTIONS: readonly string[] = [
  // Every refund not FAILED: a PENDING refund holds its amount until the processor answers.
  `(select coalesce(sum(r.amount), 0) from refund r where r.order_id = o.id and r.status <> 'FAILED')`,
  // Every dispute LOST or ACCEPTED: the cardholder's bank took that money back.
  `(select coalesce(sum(d.amount), 0) from dispute d where d.order_id = o.id and d.status in ('LOST', 'ACCEPTED'))`,
];

const quoted = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/**
 * What a new dispute of the order (`?`, its id) may claim at most: its balance less what its open
 * disputes hold (each may yet be lost, and take its amount off the balance).
 */
const DISPUTABLE_SQL = `select o.total_charged_amount - ${BALANCE_DEDUCTIONS.join(' - ')}
    - (select coalesce(sum(d.amount), 0) from dispute d where d.order_id = o.id and d.status in (${quoted(OPEN_DISPUTE_STATUSES)})) as disputable
  from checkout_order o where o.id = ?`;

/** What a new dispute of the order may claim at most (never negative), read with `execute` (the caller's transaction, after the order's row lock). */
export async function disputableAmount(execute: (sql: string, params: unknown[]) => Promise<Row[]>, orderId: number): Promise<Money> {
  const [row] = await execute(DISPUTABLE_SQL, [orderId]);
  const left = new Money(row?.disputable ?? 0);
  return left.isNegative() ? new Money(0) : left;
}

/** The order a refund is asked of, as locked. */
export interface OrderToRefund {
  id: number;
  reference: string;
  statusId: OrderStatusId;
  currency: string;
  processorReference: string;
}

/** A refund with its order's reference. */
export interface RefundOfOrder {
  refund: Refund;
  orderReference: string;
}

/**
 * What decides a refund of an order: its balance (never negative), its open disputes, the token
 * of the payment refunded, and the refund the caller's idempotency key was used for before.
 */
export interface RefundStanding {
  balance: Money;
  openDisputes: number;
  paymentToken: string | null;
  earlier: RefundOfOrder | null;
}

/** A new refund, PENDING, and its timeline entry. */
export interface NewRefund {
  id: string;
  orderId: number;
  environmentId: number;
  amount: string;
  currency: string;
  status: RefundStatus;
  reason: string | null;
  idempotencyKey: string | null;
  requestedAmount: string | null;
  at: Date;
  entry: { event: string; description: string; metadata: Record<string, unknown> };
}

/** A refund's settlement: the refund's new state, its timeline entry and its outbox event, written only while it is PENDING. */
export interface RefundSettlementWrite {
  refundId: string;
  status: RefundStatus;
  processorReference: string | null;
  failureReason: string | null;
  at: Date;
  entry: { event: string; description: string; metadata: Record<string, unknown> };
  event: OrderEventRow;
}

/**
 * A refund's SQL, each one prepared statement: the order locked (with the earlier refund of the
 * key), then what decides the refund read after the lock (a statement of its own: in READ
 * COMMITTED a statement sees what was committed before it began, so the balance read after the
 * lock sees every refund committed by those that held it), the refund written with its timeline
 * entry; and its settlement in one statement guarded by the refund still being PENDING. No rule
 * lives here (refund.service.ts and payment-state.ts decide on what this answers).
 */
export class RefundQueries {
  private readonly refund: EntityRowMapper<Refund>;
  private readonly lockStatement: PreparedStatement;
  private readonly standingStatement: PreparedStatement;
  private readonly insertStatement: PreparedStatement;
  private readonly byIdStatement: PreparedStatement;
  private readonly byKeyStatement: PreparedStatement;
  private readonly settleStatement: PreparedStatement;

  constructor(orm: MikroORM) {
    this.refund = new EntityRowMapper(orm, Refund, 'r');
    this.lockStatement = {
      name: 'pgw_refund_lock_v1',
      text: `select o.id, o.reference, o.status_id, o.currency, o.processor_reference from checkout_order o
        where o.environment_id = $1::int and o.reference = $2::varchar for update`,
    };
    this.standingStatement = {
      name: 'pgw_refund_standing_v1',
      text: `select o.total_charged_amount - ${BALANCE_DEDUCTIONS.join(' - ')} as balance,
          (select count(*) from dispute d where d.order_id = o.id and d.status in (${quoted(OPEN_DISPUTE_STATUSES)}))::int as open_disputes,
          (select q.processor_token from order_payment q where q.order_id = o.id and q.status_id = $2::smallint order by q.id desc limit 1) as payment_token,
          ${this.refund.selectList}, ro.reference as "r_order_reference"
        from checkout_order o
        left join refund r on r.environment_id = $3::int and r.idempotency_key = $4::varchar
        left join checkout_order ro on ro.id = r.order_id
        where o.id = $1::int`,
    };
    this.insertStatement = {
      name: 'pgw_refund_insert_v1',
      text: `with written as (
          insert into refund as r (id, order_id, environment_id, amount, currency, status, reason, idempotency_key, requested_amount, created_at, updated_at)
          values ($1::uuid, $2::int, $3::int, $4::numeric, $5::char(3), $6::text, $7::text, $8::varchar, $9::numeric, $10::timestamptz, $10::timestamptz)
          returning ${this.refund.selectList}
        ), timeline as (
          insert into timeline_event (order_id, event, source, description, metadata, created_at)
          values ($2::int, $11::varchar, 'merchant', $12::text, $13::json, $10::timestamptz)
        )
        select * from written`,
    };
    const withOrder = `select ${this.refund.selectList}, o.reference as "r_order_reference" from refund r join checkout_order o on o.id = r.order_id`;
    this.byIdStatement = { name: 'pgw_refund_by_id_v1', text: `${withOrder} where r.id = $1::uuid` };
    this.byKeyStatement = { name: 'pgw_refund_by_key_v1', text: `${withOrder} where r.environment_id = $1::int and r.idempotency_key = $2::varchar` };
    // Nothing is written unless the refund is still PENDING: of two settlements at once, the
    // second waits for the first's row lock, finds it settled, and writes nothing.
    const event = outboxEventSql('exists (select 1 from settled)', (i) => `$${9 + i}`);
    this.settleStatement = {
      name: 'pgw_refund_settle_v2',
      text: `with settled as (
          update refund set status = $2::text, processor_reference = $3::varchar, failure_reason = $4::text, updated_at = $5::timestamptz
           where id = $1::uuid and status = 'PENDING' returning order_id
        ), timeline as (
          insert into timeline_event (order_id, event, source, description, metadata, created_at)
          select order_id, $6::varchar, 'system', $7::text, $8::json, $5::timestamptz from settled
        ), ${event.ctes}
        select (select count(*) from settled)::int as settled, ${event.notified}`,
    };
  }

  /** The environment's order of `reference`, locked FOR UPDATE (inside the caller's transaction); null when there is no such order. */
  async lockOrder(run: RunSql, environmentId: number, reference: string): Promise<OrderToRefund | null> {
    const [row] = await run(this.lockStatement, [environmentId, reference]);
    if (!row) return null;
    return { id: Number(row.id), reference: row.reference, statusId: row.status_id, currency: row.currency, processorReference: row.processor_reference };
  }

  /**
   * The order's balance, open disputes and refunded payment's token (the Successful attempt's,
   * latest first), with the environment's refund of `idempotencyKey` (none when null).
   */
  async standing(
    run: RunSql,
    order: { id: number; environmentId: number },
    successful: OrderStatusId,
    idempotencyKey: string | null = null,
  ): Promise<RefundStanding> {
    const [row] = await run(this.standingStatement, [order.id, successful, order.environmentId, idempotencyKey]);
    const balance = new Money(row?.balance ?? 0);
    const earlier = row ? this.refund.map(row) : null;
    return {
      balance: balance.isNegative() ? new Money(0) : balance,
      openDisputes: Number(row?.open_disputes ?? 0),
      paymentToken: row?.payment_token ?? null,
      earlier: earlier ? { refund: earlier, orderReference: row!.r_order_reference } : null,
    };
  }

  /** Writes the refund and its timeline entry; answers the refund as written. */
  async insert(run: RunSql, refund: NewRefund): Promise<Refund> {
    const [row] = await run(this.insertStatement, [
      refund.id,
      refund.orderId,
      refund.environmentId,
      refund.amount,
      refund.currency,
      refund.status,
      refund.reason,
      refund.idempotencyKey,
      refund.requestedAmount,
      refund.at,
      refund.entry.event,
      refund.entry.description,
      JSON.stringify(refund.entry.metadata),
    ]);
    return this.refund.map(row!)!;
  }

  /** The refund with its order's reference; null when there is none. */
  async byId(run: RunSql, id: string): Promise<RefundOfOrder | null> {
    return this.withOrder(await run(this.byIdStatement, [id]));
  }

  /** The environment's refund of `idempotencyKey`, with its order's reference; null when there is none. */
  async byKey(run: RunSql, environmentId: number, idempotencyKey: string): Promise<RefundOfOrder | null> {
    return this.withOrder(await run(this.byKeyStatement, [environmentId, idempotencyKey]));
  }

  /** Settles a PENDING refund with its timeline entry, outbox event, delivery and NOTIFY, all or nothing; answers whether it was still PENDING. */
  async settle(run: RunSql, write: RefundSettlementWrite): Promise<boolean> {
    const { event } = write;
    const [row] = await run(this.settleStatement, [
      write.refundId,
      write.status,
      write.processorReference,
      write.failureReason,
      write.at,
      write.entry.event,
      write.entry.description,
      JSON.stringify(write.entry.metadata),
      ...outboxEventParams({ ...event, sequence: 0 }),
    ]);
    return Number(row?.settled ?? 0) === 1;
  }

  private withOrder(rows: Row[]): RefundOfOrder | null {
    const [row] = rows;
    return row ? { refund: this.refund.map(row)!, orderReference: row.r_order_reference } : null;
  }
}
