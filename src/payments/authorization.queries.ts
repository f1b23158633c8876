import type { MikroORM } from '@mikro-orm/postgresql';
import type { PreparedStatement, Row, RunSql } from '../db/sql';
import { EntityRowMapper } from '../db/row-mapper';
import { Order } from '../orders/order.entity';
import { OrderStatus } from '../orders/order-status';
import { Customer } from '../orders/customer.entity';
import { OrderPayment } from '../orders/order-payment.entity';
import { CardDetail } from '../orders/card-detail.entity';
import { PaymentLink } from '../links/payment-link.entity';
import { PaymentLinkType } from '../links/payment-link-type.entity';
import type { EnvironmentMode } from '../merchants/app-environment.entity';
import { auditEntryParams, auditEntrySql, type StampedAuditRecord } from '../merchants/audit/audit.service';
import { outboxEventParams, outboxEventSql, type OutboxRow } from '../events/outbox.service';
import type { TimelineEntry } from './attempt-rules';
import { AuthorizationAction } from './authorization-action.entity';
import { paymentHistory } from './payment-rows';

/** An order as a merchant's capture or void is first checked on (no lock), and the earlier action of the merchant's key (with its order's reference). */
export interface KeyAndOrder {
  order: Pick<Order, 'id' | 'amount' | 'currency' | 'paymentMethod' | 'statusId'> | null;
  earlier: AuthorizationAction | null;
}

/** An order's rows as its event shows them, and its Authorized payment (null when it has none). */
export interface OrderRows {
  /** With its customer, and its link with the link's type. */
  order: Order;
  environmentId: number;
  payment: OrderPayment | null;
  payments: OrderPayment[];
  cards: CardDetail[];
  subsidiaryId: number;
  mode: EnvironmentMode;
}

/**
 * An order locked for a claim, with its Authorized payment (locked too), and the row versions
 * (xmin) of both as read: a settlement that starts from these rows writes only if neither
 * changed since (`writeSettlement` with `unchangedSince`).
 */
export interface LockedForClaim extends OrderRows {
  versions: RowVersions;
}

/** The row versions (xmin) of an order, of its Authorized payment and of its link (null: none). */
export interface RowVersions {
  order: string;
  payment: string | null;
  link: { id: number; xmin: string } | null;
}

/** A claim's new pending action: its id, or why there is none (the merchant's key has an action already; a capture or void of the order is pending). */
export type ClaimInsert = { id: number } | { id: null; earlier: boolean; pending: boolean };

/** A pending action's rows, locked for its settlement (order, action, Authorized payment), with what the order's event shows (`payment` null: the action is no longer pending). */
export interface LockedAction extends OrderRows {
  action: AuthorizationAction;
}

/**
 * A settlement's writes: the action; the order and payment when `orderChanged` (a confirmed
 * action); the timeline entry; the outbox event and the audit entry (a confirmed action: written
 * only with the order).
 */
export interface ActionWrite {
  action: AuthorizationAction;
  orderChanged: boolean;
  order: Order;
  payment: OrderPayment;
  entry: TimelineEntry;
  event: OutboxRow | null;
  audit: StampedAuditRecord | null;
}

const ORDER_KEY_COLUMNS = ['id', 'amount', 'currency', 'payment_method', 'status_id'];

/**
 * The SQL of a capture or void of an Authorized order (capture.service.ts), each one prepared
 * statement: the merchant's request checked without locks (its key's earlier action and the
 * order), the claim (a locking read of everything the order's event shows, then the pending
 * action inserted in a later statement, so that it sees any action a transaction it waited for
 * committed), the settlement (one statement writing action, order, payment, timeline, event,
 * delivery, NOTIFY and audit entry, guarded by the claim's row versions when it starts from the
 * claim's rows; else after the same locking read by the action). No rule lives here
 * (authorization-rules.ts).
 */
export class AuthorizationQueries {
  private readonly keyOrder: EntityRowMapper<Order>;
  private readonly earlier: EntityRowMapper<AuthorizationAction>;
  private readonly order: EntityRowMapper<Order>;
  private readonly action: EntityRowMapper<AuthorizationAction>;
  private readonly payment: EntityRowMapper<OrderPayment>;
  private readonly listed: EntityRowMapper<OrderPayment>;
  private readonly card: EntityRowMapper<CardDetail>;
  private readonly customer: EntityRowMapper<Customer>;
  private readonly link: EntityRowMapper<PaymentLink>;
  private readonly linkType: EntityRowMapper<PaymentLinkType>;
  private readonly keyRead: PreparedStatement;
  private readonly claimRead: Record<'reference' | 'id', PreparedStatement>;
  private readonly claimInsert: PreparedStatement;
  private readonly settlementRead: PreparedStatement;
  private readonly settlementWrite: Record<'locked' | 'unchangedSince', PreparedStatement>;

  constructor(orm: MikroORM) {
    this.keyOrder = new EntityRowMapper(orm, Order, { alias: 'o', columns: ORDER_KEY_COLUMNS, prefix: 'o__' });
    this.earlier = new EntityRowMapper(orm, AuthorizationAction, 'k');
    this.order = new EntityRowMapper(orm, Order, 'o');
    this.action = new EntityRowMapper(orm, AuthorizationAction, 'k');
    this.payment = new EntityRowMapper(orm, OrderPayment, 'p');
    this.listed = new EntityRowMapper(orm, OrderPayment, 'q');
    this.card = new EntityRowMapper(orm, CardDetail, 'd');
    this.customer = new EntityRowMapper(orm, Customer, 'c');
    this.link = new EntityRowMapper(orm, PaymentLink, 'l');
    this.linkType = new EntityRowMapper(orm, PaymentLinkType, 't');

    this.keyRead = {
      name: 'pgw_auth_key_read_v1',
      text: `select ${this.keyOrder.selectList}, ${this.earlier.selectList}, ko.reference as "ko__reference"
          from (select 1) one
          left join checkout_order o on o.environment_id = $1::int and o.reference = $2::varchar
          left join (authorization_action k join checkout_order ko on ko.id = k.order_id)
            on $3::varchar is not null and k.environment_id = $1::int and k.merchant_key = $3::varchar`,
    };

    // What the order's event shows, with the order, its action (when `action`) and its Authorized payment
    // locked in that order (each subquery runs before the next): the claim's read and the settlement's.
    const lockedRows = (orderWhere: string, action: boolean) => `${action ? 'a as (select order_id from authorization_action where id = $1::int), ' : ''}o as (
          select ${this.order.selectList}, o.xmin::text as "o__xmin", e.subsidiary_id as "e__subsidiary_id", e.mode as "e__mode"
            from checkout_order o join app_environment e on e.id = o.environment_id where ${orderWhere} for update of o
        )${
          action
            ? `, k as (
          select ${this.action.selectList} from authorization_action k where k.id = $1::int and k.order_id = (select "o__id" from o) for update
        )`
            : ''
        }, p as (
          select ${this.payment.selectList}, p.xmin::text as "p__xmin" from order_payment p
           where p.order_id = (select "o__id" from o)${action ? ' and exists (select 1 from k)' : ''} and p.status_id = ${OrderStatus.Authorized} order by p.id limit 1 for update
        )
        select o.*, ${action ? 'k.*, ' : ''}p.*, ${this.customer.selectList}, ${this.link.selectList}, l.xmin::text as "l__xmin", ${this.linkType.selectList}, ${this.listed.selectList}, ${this.card.selectList}
          from o ${action ? 'left join k on true ' : ''}left join p on true
          left join customer c on c.id = o."o__customer_id"
          left join payment_link l on l.id = o."o__payment_link_id" left join payment_link_type t on t.id = l.type_id
          left join order_payment q on q.order_id = o."o__id"
          left join card_detail d on d.order_payment_id = q.id
         order by q.id, d.id`;
    this.claimRead = {
      reference: { name: 'pgw_auth_claim_ref_v2', text: `with ${lockedRows('o.environment_id = $1::int and o.reference = $2::varchar', false)}` },
      id: { name: 'pgw_auth_claim_id_v2', text: `with ${lockedRows('o.id = $1::int', false)}` },
    };

    // A statement after the claim's locking read: it sees what a transaction that held the order's lock committed.
    this.claimInsert = {
      name: 'pgw_auth_claim_insert_v1',
      text: `with pending as (
          select 1 from authorization_action where order_id = $1::int and state = 'pending'
        ), earlier as (
          select 1 from authorization_action where $7::varchar is not null and environment_id = $6::int and merchant_key = $7::varchar
        ), ins as (
          insert into authorization_action (order_id, kind, actor, amount, quote, environment_id, merchant_key, requested_amount, idempotency_key, state, created_at)
          select $1::int, $2::varchar, $3::varchar, $4::numeric, $5::jsonb, $6::int, $7::varchar, $8::numeric, $9::varchar, 'pending', $10::timestamptz
           where not exists (select 1 from pending) and not exists (select 1 from earlier)
          returning id
        )
        select (select id from ins) as id, exists (select 1 from earlier) as earlier, exists (select 1 from pending) as pending`,
    };

    // Order first, then the action, then the payment: the lock order of every path.
    this.settlementRead = { name: 'pgw_auth_settle_read_v2', text: `with ${lockedRows('o.id = (select order_id from a)', true)}` };

    const event = outboxEventSql('exists (select 1 from pay)', (i) => `$${30 + i}`);
    const audit = auditEntrySql('exists (select 1 from ord)', (i) => `$${44 + i}`);
    // Unlocked (`unchangedSince`): the order is locked first, as on every path; a confirmed action
    // ($7) is written only if the order, its payment and its link are still the rows the claim read
    // (their xmin; the link locked FOR SHARE, as the pay's writes do). A refusal changes none of them.
    const settlementWrite = (unchangedSince: boolean) => `with ${
      unchangedSince
        ? `g as (select id from checkout_order where id = $6::int and (not $7::boolean or xmin = $53::xid) for update),
        gp as (select id from order_payment where id = $21::int and xmin = $54::xid and $7::boolean and exists (select 1 from g) for update),
        lk as (select id from payment_link where id = $55::int and xmin = $56::xid and exists (select 1 from gp) for share), `
        : ''
    }act as (
          update authorization_action set state = $2::varchar, response_code = $3::varchar, response_message = $4::text, settled_at = $5::timestamptz
           where id = $1::int and state = 'pending'${
             unchangedSince
               ? ' and exists (select 1 from g) and (not $7::boolean or (exists (select 1 from gp) and ($55::int is null or exists (select 1 from lk))))'
               : ''
           } returning id
        ), ord as (
          update checkout_order set status_id = $8::smallint, amount = $9::numeric, fee = $10::numeric, fee_rate = $11::numeric,
            subsidiary_fee = $12::numeric, customer_fee = $13::numeric, total_charged_amount = $14::numeric, payment_response_code = $15::varchar,
            payment_response_message = $16::text, provider_response_date = $17::timestamptz, date_payment_confirmed = $18::timestamptz,
            event_sequence = $19::int, version = version + 1, updated_at = $20::timestamptz
           where id = $6::int and $7::boolean and exists (select 1 from act) returning id
        ), pay as (
          update order_payment set status_id = $22::smallint, response_code = $23::varchar, response_message = $24::text, date_updated = $25::timestamptz
           where id = $21::int and exists (select 1 from ord) returning id
        ), timeline as (
          insert into timeline_event (order_id, event, source, description, metadata, created_at)
          select $6::int, $26::varchar, 'system', $27::text, $28::json, $29::timestamptz where exists (select 1 from act)
        ), ${event.ctes}, ${audit}
        select (select count(*) from act)::int as written, ${event.notified}`;
    this.settlementWrite = {
      locked: { name: 'pgw_auth_settle_write_v4', text: settlementWrite(false) },
      unchangedSince: { name: 'pgw_auth_settle_write_unchanged_v2', text: settlementWrite(true) },
    };
  }

  /** The order of (environment, reference), if any, and the earlier action of the merchant's key `key` (null: none asked). */
  async readKeyAndOrder(run: RunSql, environmentId: number, reference: string, key: string | null): Promise<KeyAndOrder> {
    const [row] = await run(this.keyRead, [environmentId, reference, key]);
    return { order: this.keyOrder.map(row!), earlier: this.earlierOf(row!) };
  }

  private earlierOf(row: Row): AuthorizationAction | null {
    const earlier = this.earlier.map(row);
    if (earlier) earlier.order = { id: earlier.order.id, reference: row.ko__reference as string } as Order;
    return earlier;
  }

  /** The order (by environment and reference, or by id) and its Authorized payment, locked in that order; null when there is no such order. */
  async lockForClaim(run: RunSql, order: { environmentId: number; reference: string } | { id: number }): Promise<LockedForClaim | null> {
    const rows = await run('id' in order ? this.claimRead.id : this.claimRead.reference, 'id' in order ? [order.id] : [order.environmentId, order.reference]);
    const first = rows[0];
    if (!first) return null;
    const locked = this.orderRows(rows);
    const link = locked.order.paymentLink;
    return {
      ...locked,
      versions: {
        order: first.o__xmin as string,
        payment: locked.payment ? (first.p__xmin as string) : null,
        link: link ? { id: link.id, xmin: first.l__xmin as string } : null,
      },
    };
  }

  /** The rows of `lockedRows`: the order with its customer and link, its Authorized payment, all its payments and cards. */
  private orderRows(rows: Row[]): OrderRows {
    const first = rows[0]!;
    const order = this.order.map(first)!;
    order.customer = this.customer.map(first);
    const link = this.link.map(first);
    if (link) link.type = this.linkType.map(first)!;
    order.paymentLink = link;
    const payment = this.payment.map(first);
    const { payments, cards } = paymentHistory(rows, this.listed, this.card, payment);
    return {
      order,
      environmentId: (order.environment as unknown as { id: number }).id,
      payment,
      payments,
      cards,
      subsidiaryId: Number(first.e__subsidiary_id),
      mode: first.e__mode as EnvironmentMode,
    };
  }

  /** Inserts the pending action unless the order has one pending or the merchant's key has an action (see ClaimInsert). */
  async insertClaim(
    run: RunSql,
    a: Pick<AuthorizationAction, 'kind' | 'actor' | 'amount' | 'quote' | 'merchantKey' | 'requestedAmount' | 'idempotencyKey' | 'createdAt'>,
    orderId: number,
    environmentId: number,
  ): Promise<ClaimInsert> {
    const [row] = await run(this.claimInsert, [
      orderId,
      a.kind,
      a.actor,
      a.amount,
      a.quote === null ? null : JSON.stringify(a.quote),
      environmentId,
      a.merchantKey,
      a.requestedAmount,
      a.idempotencyKey,
      a.createdAt,
    ]);
    if (row!.id !== null) return { id: Number(row!.id) };
    return { id: null, earlier: row!.earlier === true, pending: row!.pending === true };
  }

  /** A pending action's order, the action and the order's Authorized payment, locked in that order, with what the order's event shows; null when there is no such action. */
  async lockForSettlement(run: RunSql, actionId: number): Promise<LockedAction | null> {
    const rows = await run(this.settlementRead, [actionId]);
    const action = rows[0] ? this.action.map(rows[0]) : null;
    return action ? { ...this.orderRows(rows), action } : null;
  }

  /**
   * Writes a settlement in one statement, its audit entry included (see ActionWrite); false when
   * nothing was written: the action was no longer pending, or (with `unchangedSince`, rows read
   * before, not locked now) the order or its payment changed since those versions.
   */
  async writeSettlement(run: RunSql, w: ActionWrite, unchangedSince?: RowVersions): Promise<boolean> {
    const { action: a, order: o, payment: p, entry, event: e } = w;
    const [row] = await run(unchangedSince ? this.settlementWrite.unchangedSince : this.settlementWrite.locked, [
      a.id,
      a.state,
      a.responseCode,
      a.responseMessage,
      a.settledAt,
      o.id,
      w.orderChanged,
      o.statusId,
      o.amount,
      o.fee,
      o.feeRate,
      o.subsidiaryFee,
      o.customerFee,
      o.totalChargedAmount,
      o.paymentResponseCode,
      o.paymentResponseMessage,
      o.providerResponseDate,
      o.datePaymentConfirmed,
      o.eventSequence,
      o.updatedAt,
      p.id,
      p.statusId,
      p.responseCode,
      p.responseMessage,
      p.dateUpdated,
      entry.event,
      entry.description,
      entry.metadata === null ? null : JSON.stringify(entry.metadata),
      // As the entity's default: the time written, not the clock's (which a test may move).
      new Date(),
      ...outboxEventParams(e && { ...e, notify: 'transaction' }),
      ...auditEntryParams(w.audit),
      ...(unchangedSince ? [unchangedSince.order, unchangedSince.payment, unchangedSince.link?.id ?? null, unchangedSince.link?.xmin ?? null] : []),
    ]);
    return row?.written === 1;
  }
}
