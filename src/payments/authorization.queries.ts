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

/**
 * What a merchant's capture or void is first decided on, read without locks: the order's rows as
 * a claim reads them (null: no such order), and the earlier action of the merchant's key (with
 * its order's reference).
 */
export interface Peeked {
  rows: LockedForClaim | null;
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
 * An order read for a claim, with its Authorized payment, and the row versions (xmin) of both and
 * of its link as read: a claim from rows read without locks is written only if the order and
 * payment are unchanged since (`insertClaimIfUnchanged`), and a settlement that starts from these
 * rows writes only if none changed since (`writeSettlement` with `unchangedSince`).
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

/** What a claim records of its pending action. */
export type ClaimAction = Pick<AuthorizationAction, 'kind' | 'actor' | 'amount' | 'quote' | 'merchantKey' | 'requestedAmount' | 'idempotencyKey' | 'createdAt'>;

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

/**
 * The SQL of a capture or void of an Authorized order (capture.service.ts), each one prepared
 * statement: the merchant's request read without locks (its key's earlier action, and everything
 * the order's event shows, with row versions), the claim from those rows (the pending action
 * inserted in one statement, only while the order and its payment are as read and no action of
 * the order is pending or of the key exists: the unique indexes decide the last two), or else the
 * locking claim (a locking read of the same rows, then the pending action inserted in a later
 * statement, so that it sees any action a transaction it waited for committed), the settlement (one statement writing action, order, payment, timeline, event,
 * delivery, NOTIFY and audit entry, guarded by the claim's row versions when it starts from the
 * claim's rows; else after the same locking read by the action). No rule lives here
 * (authorization-rules.ts).
 */
export class AuthorizationQueries {
  private readonly earlier: EntityRowMapper<AuthorizationAction>;
  private readonly order: EntityRowMapper<Order>;
  private readonly action: EntityRowMapper<AuthorizationAction>;
  private readonly payment: EntityRowMapper<OrderPayment>;
  private readonly listed: EntityRowMapper<OrderPayment>;
  private readonly card: EntityRowMapper<CardDetail>;
  private readonly customer: EntityRowMapper<Customer>;
  private readonly link: EntityRowMapper<PaymentLink>;
  private readonly linkType: EntityRowMapper<PaymentLinkType>;
  private readonly earlierRead: PreparedStatement;
  private readonly peekRead: PreparedStatement;
  private readonly claimRead: Record<'reference' | 'id', PreparedStatement>;
  private readonly claimInsert: PreparedStatement;
  private readonly claimIfUnchanged: PreparedStatement;
  private readonly settlementRead: PreparedStatement;
  private readonly settlementWrite: Record<'locked' | 'unchangedSince', PreparedStatement>;

  constructor(orm: MikroORM) {
    this.earlier = new EntityRowMapper(orm, AuthorizationAction, 'k');
    this.order = new EntityRowMapper(orm, Order, 'o');
    this.action = new EntityRowMapper(orm, AuthorizationAction, 'k');
    this.payment = new EntityRowMapper(orm, OrderPayment, 'p');
    this.listed = new EntityRowMapper(orm, OrderPayment, 'q');
    this.card = new EntityRowMapper(orm, CardDetail, 'd');
    this.customer = new EntityRowMapper(orm, Customer, 'c');
    this.link = new EntityRowMapper(orm, PaymentLink, 'l');
    this.linkType = new EntityRowMapper(orm, PaymentLinkType, 't');

    // The action of the merchant's key (parameter `key`) in environment $1, with its order's reference.
    const earlierOfKey = (key: string) => `(authorization_action k join checkout_order ko on ko.id = k.order_id)
            on ${key}::varchar is not null and k.environment_id = $1::int and k.merchant_key = ${key}::varchar`;
    this.earlierRead = {
      name: 'pgw_auth_earlier_read_v1',
      text: `select ${this.earlier.selectList}, ko.reference as "ko__reference" from (select 1) one left join ${earlierOfKey('$2')}`,
    };

    // What the order's event shows, with the order, its action (when `action`) and its Authorized payment
    // locked in that order (each subquery runs before the next): the claim's read and the settlement's.
    // Unlocked (`peek`): the same rows read without locks, with the earlier action of the key ($3).
    const lockedRows = (
      orderWhere: string,
      action: boolean,
      peek = false,
    ) => `${action ? 'a as (select order_id from authorization_action where id = $1::int), ' : ''}o as (
          select ${this.order.selectList}, o.xmin::text as "o__xmin", e.subsidiary_id as "e__subsidiary_id", e.mode as "e__mode"
            from checkout_order o join app_environment e on e.id = o.environment_id where ${orderWhere}${peek ? '' : ' for update of o'}
        )${
          action
            ? `, k as (
          select ${this.action.selectList} from authorization_action k where k.id = $1::int and k.order_id = (select "o__id" from o) for update
        )`
            : ''
        }, p as (
          select ${this.payment.selectList}, p.xmin::text as "p__xmin" from order_payment p
           where p.order_id = (select "o__id" from o)${action ? ' and exists (select 1 from k)' : ''} and p.status_id = ${OrderStatus.Authorized} order by p.id limit 1${peek ? '' : ' for update'}
        )
        select o.*, ${action ? 'k.*, ' : ''}p.*, ${this.customer.selectList}, ${this.link.selectList}, l.xmin::text as "l__xmin", ${this.linkType.selectList}, ${this.listed.selectList}, ${this.card.selectList}${
          peek ? `, ${this.earlier.selectList}, ko.reference as "ko__reference"` : ''
        }
          from ${peek ? `(select 1) one left join o on true left join ${earlierOfKey('$3')} ` : 'o '}${action ? 'left join k on true ' : ''}left join p on true
          left join customer c on c.id = o."o__customer_id"
          left join payment_link l on l.id = o."o__payment_link_id" left join payment_link_type t on t.id = l.type_id
          left join order_payment q on q.order_id = o."o__id"
          left join card_detail d on d.order_payment_id = q.id
         order by q.id, d.id`;
    this.peekRead = { name: 'pgw_auth_peek_v1', text: `with ${lockedRows('o.environment_id = $1::int and o.reference = $2::varchar', false, true)}` };
    this.claimRead = {
      reference: { name: 'pgw_auth_claim_ref_v2', text: `with ${lockedRows('o.environment_id = $1::int and o.reference = $2::varchar', false)}` },
      id: { name: 'pgw_auth_claim_id_v2', text: `with ${lockedRows('o.id = $1::int', false)}` },
    };

    // The pending action of a claim ($1–$10, claimParams), inserted where the statement's condition holds.
    const insertAction = `insert into authorization_action (order_id, kind, actor, amount, quote, environment_id, merchant_key, requested_amount, idempotency_key, state, created_at)
          select $1::int, $2::varchar, $3::varchar, $4::numeric, $5::jsonb, $6::int, $7::varchar, $8::numeric, $9::varchar, 'pending', $10::timestamptz`;
    // A statement after the claim's locking read: it sees what a transaction that held the order's lock committed.
    this.claimInsert = {
      name: 'pgw_auth_claim_insert_v1',
      text: `with pending as (
          select 1 from authorization_action where order_id = $1::int and state = 'pending'
        ), earlier as (
          select 1 from authorization_action where $7::varchar is not null and environment_id = $6::int and merchant_key = $7::varchar
        ), ins as (
          ${insertAction}
           where not exists (select 1 from pending) and not exists (select 1 from earlier)
          returning id
        )
        select (select id from ins) as id, exists (select 1 from earlier) as earlier, exists (select 1 from pending) as pending`,
    };

    // The claim from rows read without locks, in one statement: the order locked first, as on every
    // path, then its payment, each only if unchanged since read ($11, $13: their xmin, rechecked on
    // the newest row after a wait for the lock); the pending action inserted only then, and not at all
    // when another is pending for the order or the key has one (the unique indexes, which see what
    // committed after this statement's snapshot).
    this.claimIfUnchanged = {
      name: 'pgw_auth_claim_unchanged_v1',
      text: `with g as (select id from checkout_order where id = $1::int and xmin = $11::xid for update),
        gp as (select id from order_payment where id = $12::int and xmin = $13::xid and exists (select 1 from g) for update),
        ins as (
          ${insertAction}
           where exists (select 1 from gp)
          on conflict do nothing
          returning id
        )
        select (select id from ins) as id`,
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

  /** The earlier action of the merchant's key `key` in the environment, or null. */
  async readEarlier(run: RunSql, environmentId: number, key: string): Promise<AuthorizationAction | null> {
    const [row] = await run(this.earlierRead, [environmentId, key]);
    return this.earlierOf(row!);
  }

  /** The order of (environment, reference) as a claim reads it, without locks, and the earlier action of the merchant's key `key` (null: none asked). */
  async peek(run: RunSql, environmentId: number, reference: string, key: string | null): Promise<Peeked> {
    const rows = await run(this.peekRead, [environmentId, reference, key]);
    return { rows: rows[0]!.o__id === null ? null : this.claimRows(rows), earlier: this.earlierOf(rows[0]!) };
  }

  private earlierOf(row: Row): AuthorizationAction | null {
    const earlier = this.earlier.map(row);
    if (earlier) earlier.order = { id: earlier.order.id, reference: row.ko__reference as string } as Order;
    return earlier;
  }

  /** The order (by environment and reference, or by id) and its Authorized payment, locked in that order; null when there is no such order. */
  async lockForClaim(run: RunSql, order: { environmentId: number; reference: string } | { id: number }): Promise<LockedForClaim | null> {
    const rows = await run('id' in order ? this.claimRead.id : this.claimRead.reference, 'id' in order ? [order.id] : [order.environmentId, order.reference]);
    return rows[0] ? this.claimRows(rows) : null;
  }

  /** The rows of a claim's read, with the versions of the order, its Authorized payment and its link. */
  private claimRows(rows: Row[]): LockedForClaim {
    const first = rows[0]!;
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
  async insertClaim(run: RunSql, a: ClaimAction, orderId: number, environmentId: number): Promise<ClaimInsert> {
    const [row] = await run(this.claimInsert, this.claimParams(a, orderId, environmentId));
    if (row!.id !== null) return { id: Number(row!.id) };
    return { id: null, earlier: row!.earlier === true, pending: row!.pending === true };
  }

  private claimParams(a: ClaimAction, orderId: number, environmentId: number): unknown[] {
    const quote = a.quote === null ? null : JSON.stringify(a.quote);
    return [orderId, a.kind, a.actor, a.amount, quote, environmentId, a.merchantKey, a.requestedAmount, a.idempotencyKey, a.createdAt];
  }

  /**
   * Inserts the pending action from rows read without locks (`peek`), in one statement: only while
   * the order and its Authorized payment are still those rows, no action of the order is pending
   * and the merchant's key has none. Answers its id, or null when nothing was written (the locking
   * claim then decides).
   */
  async insertClaimIfUnchanged(run: RunSql, a: ClaimAction, read: LockedForClaim): Promise<number | null> {
    const [row] = await run(this.claimIfUnchanged, [
      ...this.claimParams(a, read.order.id, read.environmentId),
      read.versions.order,
      read.payment!.id,
      read.versions.payment,
    ]);
    return row!.id === null ? null : Number(row!.id);
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
