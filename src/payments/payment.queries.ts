import type { MikroORM } from '@mikro-orm/postgresql';
import type { PreparedStatement, Row, RunSql } from '../db/sql';
import { EntityRowMapper } from '../db/row-mapper';
import { Order } from '../orders/order.entity';
import { Customer } from '../orders/customer.entity';
import { OrderPayment } from '../orders/order-payment.entity';
import { CardDetail } from '../orders/card-detail.entity';
import { PaymentLink } from '../links/payment-link.entity';
import { PaymentLinkType } from '../links/payment-link-type.entity';
import type { EnvironmentMode } from '../merchants/app-environment.entity';
import {
  paymentHistory,
  type LockedForAttempt,
  type LockedForSettlement,
  type NewAttempt,
  type ReadAttempt,
  type SettlementWrite,
  type WriteGuard,
  type WrittenAttempt,
} from './payment-rows';
import { outboxEventParams, outboxEventSql } from '../events/outbox.service';

/** Where a write's guard finds what was read: parameter numbers of the order's row version, the payment's id and row version, the link's id and row version. */
interface Guard {
  order: string;
  payment?: { id: string; xmin: string };
  link?: { id: string; xmin: string };
}

const ORDER_UPDATE = `status_id = $2::smallint, payment_response_code = $3::varchar, payment_response_message = $4::text,
  provider_response_date = $5::timestamptz, date_payment_confirmed = $6::timestamptz, event_sequence = $7::int, version = version + 1, updated_at = $8::timestamptz`;

/**
 * The money path's SQL (a card pay, a 3-D Secure answer and their settlement), each one
 * prepared statement: read what an attempt or its settlement needs (with its locks inside a
 * transaction, or without them), then write everything it changes in one statement guarded by
 * what was read (WriteGuard). No rule lives here (attempt-rules.ts, link-status.ts and
 * payment-state.ts decide on the rows this answers, shaped as the entities by EntityRowMapper).
 */
export class PaymentQueries {
  private readonly order: EntityRowMapper<Order>;
  private readonly customer: EntityRowMapper<Customer>;
  private readonly link: EntityRowMapper<PaymentLink>;
  private readonly linkType: EntityRowMapper<PaymentLinkType>;
  private readonly payment: EntityRowMapper<OrderPayment>;
  private readonly lockedPayment: EntityRowMapper<OrderPayment>;
  private readonly card: EntityRowMapper<CardDetail>;
  private readonly written: { order: EntityRowMapper<Order>; payment: EntityRowMapper<OrderPayment>; card: EntityRowMapper<CardDetail> };
  private readonly attemptRead: Record<'locking' | 'plain', PreparedStatement>;
  private readonly attemptWrite: PreparedStatement;
  private readonly settlementRead: Record<'locking' | 'plain', PreparedStatement>;
  private readonly resumeRead: Record<'locking' | 'plain', PreparedStatement>;
  private readonly settlementWrite: PreparedStatement;
  private readonly resumeWrite: PreparedStatement;

  constructor(orm: MikroORM) {
    this.order = new EntityRowMapper(orm, Order, 'o');
    this.customer = new EntityRowMapper(orm, Customer, 'c');
    this.link = new EntityRowMapper(orm, PaymentLink, 'l');
    this.linkType = new EntityRowMapper(orm, PaymentLinkType, 't');
    this.payment = new EntityRowMapper(orm, OrderPayment, 'q');
    this.lockedPayment = new EntityRowMapper(orm, OrderPayment, 'p');
    this.card = new EntityRowMapper(orm, CardDetail, 'd');
    this.written = {
      order: new EntityRowMapper(orm, Order, 'wo'),
      payment: new EntityRowMapper(orm, OrderPayment, 'wp'),
      card: new EntityRowMapper(orm, CardDetail, 'wd'),
    };
    // The link is locked FOR SHARE (by the locking read, and by every guarded write): the plain
    // path only takes links that cannot be used up, whose rules need no count and so no exclusive
    // lock. A change of the link (deactivated, given a Limit) waits for the writes holding it;
    // pays on one link do not wait for each other. A link that can be used up sends its pay to the
    // entity-manager path before anything is written, which locks it FOR UPDATE and counts usage.
    const linkOf = `l as (select ${this.link.selectList}, l.xmin::text as "l__xmin" from payment_link l where l.id = (select "o__payment_link_id" from o)`;
    // The same reads with their locks (inside a transaction) and without (a guarded write follows).
    const both = (name: string, text: (lock: (clause: string) => string) => string) => ({
      locking: { name: `pgw_pay_${name}_lock_v3`, text: text((clause) => ` ${clause}`) },
      plain: { name: `pgw_pay_${name}_read_v2`, text: text(() => '') },
    });

    // Order first, then its link: the order the entity manager's paths lock in. With the customer,
    // the payments so far and their cards, which the attempt's settlement shows.
    this.attemptRead = both(
      'attempt',
      (lock) => `with o as (
          select ${this.order.selectList}, o.xmin::text as "o__xmin" from checkout_order o where o.environment_id = $1::int and o.reference = $2::varchar${lock('for update')}
        ), ${linkOf}${lock('for share')})
        select o.*, l.*, ${this.linkType.selectList}, ${this.customer.selectList}, ${this.payment.selectList}, ${this.card.selectList}
          from o left join l on true left join payment_link_type t on t.id = l."l__type_id"
          left join customer c on c.id = o."o__customer_id"
          left join order_payment q on q.order_id = o."o__id"
          left join card_detail d on d.order_payment_id = q.id
         order by q.id, d.id`,
    );

    // The guard of every write: the order, then the attempt's payment (when the
    // write has one), then the link, each locked in that order (each subquery runs before the
    // next) and kept only while it is as read. Nothing is written unless all are.
    const guarded = (v: Guard) => {
      const ctes = [`o as (select id from checkout_order where id = $1::int and xmin = ${v.order}::xid for update)`];
      if (v.payment) {
        ctes.push(
          `pp as (select id from order_payment where id = ${v.payment.id}::int and xmin = ${v.payment.xmin}::xid and exists (select 1 from o) for update)`,
        );
      }
      if (v.link) {
        ctes.push(
          `lk as (select id from payment_link where id = ${v.link.id}::int and xmin = ${v.link.xmin}::xid and exists (select 1 from ${v.payment ? 'pp' : 'o'}) for share)`,
        );
      }
      return ctes.join(',\n        ');
    };
    const unchanged = (v: Guard) =>
      ['id = (select id from o)', v.payment && 'exists (select 1 from pp)', v.link && `(${v.link.id}::int is null or exists (select 1 from lk))`]
        .filter(Boolean)
        .join(' and ');

    const attemptGuard: Guard = { order: '$29', link: { id: '$30', xmin: '$31' } };
    // Answers the rows as written (order, payment with its row version, card): the settlement that follows starts from them.
    this.attemptWrite = {
      name: 'pgw_pay_attempt_write_v5',
      text: `with ${guarded(attemptGuard)}, ord as (
          update checkout_order wo set status_id = $2::smallint, payment_method = $3::varchar, payment_response_code = $4::varchar,
            payment_response_message = $5::text, version = version + 1, updated_at = $6::timestamptz
          where ${unchanged(attemptGuard)} returning ${this.written.order.selectList}, wo.xmin::text as "wo__xmin"
        ), pay as (
          insert into order_payment as wp (order_id, reference, payment_option_id, payment_option, status_id, response_code, response_message,
            instrument, remarks, amount, fee, processor_token, authentication_expires_at, processing_started_at, returned_to_merchant_at, date_created, date_updated)
          select "wo__id", $7::varchar, $8::smallint, $9::varchar, $10::smallint, $11::varchar, $12::text,
            $13::text, '', $14::numeric, $15::numeric, $16::varchar, null, $17::timestamptz, null, $18::timestamptz, $18::timestamptz from ord
          returning ${this.written.payment.selectList}, wp.xmin::text as "wp__xmin"
        ), card as (
          insert into card_detail as wd (order_payment_id, environment_id, status, country, card_token, card_expiry_month, card_expiry_year,
            card_type, card_issuer, card_first_six_digits, card_last_four_digits, date_created)
          select "wp__id", $19::int, false, $20::varchar, null, $21::char(2), $22::char(2), $23::varchar, '', $24::char(6), $25::char(4), $18::timestamptz from pay
          returning ${this.written.card.selectList}
        ), timeline as (
          insert into timeline_event (order_id, event, source, description, metadata, created_at)
          select "wo__id", $26::varchar, 'system', $27::text, $28::json, $18::timestamptz from ord
        )
        select ord.*, pay.*, card.* from ord join pay on true join card on true`,
    };

    // Order, then payment, then link (each lock waits for the one before: the subqueries run first).
    const readAttempt = (lock: (clause: string) => string) => `o as (
          select ${this.order.selectList}, o.xmin::text as "o__xmin", e.subsidiary_id as "e__subsidiary_id", e.mode as "e__mode"
            from checkout_order o join app_environment e on e.id = o.environment_id where o.id = (select order_id from target)${lock('for update of o')}
        ), p as (
          select ${this.lockedPayment.selectList}, p.xmin::text as "p__xmin" from order_payment p where p.id = (select id from target) and p.order_id = (select "o__id" from o)${lock('for update')}
        )`;
    const assembled = `select o.*, p.*, ${this.customer.selectList}, ${this.payment.selectList}, ${this.card.selectList}
          from o left join p on true
          left join customer c on c.id = o."o__customer_id"
          left join order_payment q on q.order_id = o."o__id"
          left join card_detail d on d.order_payment_id = q.id`;
    // The attempt with its order's payments and cards, and its link (locked only for a settlement:
    // resuming asks nothing of the link, whose row version the settlement's write checks).
    const readWithLink = (target: string, lockLink: boolean) => (lock: (clause: string) => string) =>
      `with target as (${target}), ${readAttempt(lock)}, ${linkOf} and (select count(*) from p) >= 0${lockLink ? lock('for share') : ''})
        select x.*, l.*, ${this.linkType.selectList}
          from (${assembled}) x left join l on true left join payment_link_type t on t.id = l."l__type_id"
         order by x."q__id", x."d__id"`;
    this.settlementRead = both('settlement', readWithLink('select $2::int as id, $1::int as order_id', true));
    // A 3-D Secure or PayPal page's answer: the payment by its reference, its order first.
    this.resumeRead = both('resume', readWithLink('select id, order_id from order_payment where reference = $1::varchar', false));

    const settlementGuard: Guard = { order: '$38', payment: { id: '$9', xmin: '$39' }, link: { id: '$40', xmin: '$41' } };
    const settlementEvent = outboxEventSql('exists (select 1 from pay)', (i) => `$${24 + i}`);
    this.settlementWrite = {
      name: 'pgw_pay_settlement_write_v5',
      text: `with ${guarded(settlementGuard)}, ord as (
          update checkout_order set ${ORDER_UPDATE} where ${unchanged(settlementGuard)} returning id
        ), pay as (
          update order_payment set status_id = $10::smallint, response_code = $11::varchar, response_message = $12::text, processor_token = $13::varchar,
            authentication_expires_at = $14::timestamptz, processing_started_at = $15::timestamptz, date_updated = $16::timestamptz
          where id = (select id from pp) and exists (select 1 from ord) returning id
        ), card as (
          update card_detail set card_token = $18::varchar, card_issuer = $19::varchar, status = $20::boolean where id = $17::int and exists (select 1 from pay)
        ), timeline as (
          insert into timeline_event (order_id, event, source, description, metadata, created_at)
          select $1::int, e.event, 'system', e.description, e.metadata::json, $8::timestamptz
            from unnest($21::text[], $22::text[], $23::text[]) with ordinality as e(event, description, metadata, n) where exists (select 1 from pay) order by e.n
        ), ${settlementEvent.ctes}
        select (select count(*) from event)::int as written, ${settlementEvent.notified}`,
    };

    const resumeGuard: Guard = { order: '$7', payment: { id: '$4', xmin: '$8' } };
    this.resumeWrite = {
      name: 'pgw_pay_resume_write_v3',
      text: `with ${guarded(resumeGuard)}, ord as (
          update checkout_order wo set status_id = $2::smallint, version = version + 1, updated_at = $3::timestamptz
           where ${unchanged(resumeGuard)} returning ${this.written.order.selectList}, wo.xmin::text as "wo__xmin"
        ), pay as (
          update order_payment wp set status_id = $5::smallint, processing_started_at = $6::timestamptz, date_updated = $3::timestamptz
           where id = (select id from pp) and exists (select 1 from ord) returning ${this.written.payment.selectList}, wp.xmin::text as "wp__xmin"
        )
        select ord.*, pay.* from ord join pay on true`,
    };
  }

  /** The order of (environment, reference) and its link, locked when `locking`; null when there is no such order. */
  async readForAttempt(run: RunSql, locking: boolean, environmentId: number, reference: string): Promise<LockedForAttempt | null> {
    const rows = await run(this.attemptRead[locking ? 'locking' : 'plain'], [environmentId, reference]);
    const row = rows[0];
    if (!row) return null;
    const order = this.order.map(row)!;
    order.customer = this.customer.map(row);
    const link = this.link.map(row);
    if (link) link.type = this.linkType.map(row)!;
    order.paymentLink = link;
    return {
      order,
      link,
      ...paymentHistory(rows, this.payment, this.card),
      guard: { orderXmin: row.o__xmin as string, paymentXmin: null, linkId: link?.id ?? null, linkXmin: link ? (row.l__xmin as string) : null },
    };
  }

  /**
   * Writes a new attempt: the order's change, the payment, its card and the timeline entry.
   * Answers the rows written, or null when the guard found the order or its link changed (nothing written).
   */
  async insertAttempt(run: RunSql, a: NewAttempt): Promise<WrittenAttempt | null> {
    const { order: o, payment: p, card: c } = a;
    const [row] = await run(this.attemptWrite, [
      a.orderId,
      o.statusId,
      o.paymentMethod,
      o.paymentResponseCode,
      o.paymentResponseMessage,
      o.updatedAt,
      p.reference,
      p.paymentOptionId,
      p.paymentOption,
      p.statusId,
      p.responseCode,
      p.responseMessage,
      p.instrument,
      p.amount,
      p.fee,
      p.processorToken,
      p.processingStartedAt,
      p.dateCreated,
      a.environmentId,
      c.country,
      c.cardExpiryMonth,
      c.cardExpiryYear,
      c.cardType,
      c.cardFirstSixDigits,
      c.cardLastFourDigits,
      a.entry.event,
      a.entry.description,
      a.entry.metadata === null ? null : JSON.stringify(a.entry.metadata),
      a.guard.orderXmin,
      a.guard.linkId,
      a.guard.linkXmin,
    ]);
    if (!row) return null;
    return {
      order: this.written.order.map(row)!,
      payment: this.written.payment.map(row)!,
      card: this.written.card.map(row)!,
      orderXmin: row.wo__xmin as string,
      paymentXmin: row.wp__xmin as string,
    };
  }

  /** Order, payment and link of an attempt, locked in that order when `locking`; null when the payment is not of that order. */
  readForSettlement(run: RunSql, locking: boolean, orderId: number, paymentId: number): Promise<ReadAttempt | null> {
    return this.readAttempt(run, this.settlementRead[locking ? 'locking' : 'plain'], [orderId, paymentId]);
  }

  /** The payment of `reference` with its order (both locked when `locking`, order first) and link; null when there is no such payment. */
  readForResume(run: RunSql, locking: boolean, reference: string): Promise<ReadAttempt | null> {
    return this.readAttempt(run, this.resumeRead[locking ? 'locking' : 'plain'], [reference]);
  }

  private async readAttempt(run: RunSql, statement: PreparedStatement, params: unknown[]): Promise<ReadAttempt | null> {
    const rows = await run(statement, params);
    const locked = this.assemble(rows);
    if (!locked) return null;
    const link = this.link.map(rows[0]!);
    if (link) link.type = this.linkType.map(rows[0]!)!;
    locked.order.paymentLink = link;
    locked.guard.linkId = link?.id ?? null;
    locked.guard.linkXmin = link ? (rows[0]!.l__xmin as string) : null;
    return { ...locked, link };
  }

  /**
   * An authentication page's answer goes to the processor: order and payment as resumeAttemptRows
   * left them. Answers the rows written, or null when the guard found the order or payment changed.
   */
  async writeResume(
    run: RunSql,
    order: Pick<Order, 'id' | 'statusId' | 'updatedAt'>,
    payment: Pick<OrderPayment, 'id' | 'statusId' | 'processingStartedAt'>,
    guard: WriteGuard,
  ): Promise<Omit<WrittenAttempt, 'card'> | null> {
    const [row] = await run(this.resumeWrite, [
      order.id,
      order.statusId,
      order.updatedAt,
      payment.id,
      payment.statusId,
      payment.processingStartedAt,
      guard.orderXmin,
      guard.paymentXmin,
    ]);
    if (!row) return null;
    return {
      order: this.written.order.map(row)!,
      payment: this.written.payment.map(row)!,
      paymentXmin: row.wp__xmin as string,
      orderXmin: row.wo__xmin as string,
    };
  }

  /** Writes a settlement in one statement (see SettlementWrite); false when the guard found a row changed (nothing written). */
  async writeSettlement(run: RunSql, w: SettlementWrite): Promise<boolean> {
    const { order: o, payment: p, card: c, event: e } = w;
    const [row] = await run(this.settlementWrite, [
      o.id,
      o.statusId,
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
      p.processorToken,
      p.authenticationExpiresAt,
      p.processingStartedAt,
      p.dateUpdated,
      c?.id ?? null,
      c?.cardToken ?? null,
      c?.cardIssuer ?? null,
      c?.status ?? null,
      w.entries.map((x) => x.event),
      w.entries.map((x) => x.description),
      w.entries.map((x) => (x.metadata === null ? null : JSON.stringify(x.metadata))),
      ...outboxEventParams({ ...e, notify: 'transaction' }),
      w.guard.orderXmin,
      w.guard.paymentXmin,
      w.guard.linkId,
      w.guard.linkXmin,
    ]);
    return row?.written === 1;
  }

  private assemble(rows: Row[]): LockedForSettlement | null {
    const first = rows[0];
    const payment = first ? this.lockedPayment.map(first) : null;
    if (!first || !payment) return null;
    const order = this.order.map(first)!;
    order.customer = this.customer.map(first);
    const { payments, cards } = paymentHistory(rows, this.payment, this.card, payment);
    const guard: WriteGuard = { orderXmin: first.o__xmin as string, paymentXmin: first.p__xmin as string, linkId: null, linkXmin: null };
    return { order, payment, payments, cards, subsidiaryId: Number(first.e__subsidiary_id), mode: first.e__mode as EnvironmentMode, guard };
  }
}
