import type { OptionalProps } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlRunner, type PreparedStatement, type Row, type RunSql } from '../db/sql';
import { EntityRowMapper } from '../db/row-mapper';
import type { AppEnvironment } from '../merchants/app-environment.entity';
import { Subsidiary } from '../merchants/subsidiary.entity';
import { PaymentLink } from '../links/payment-link.entity';
import { PaymentLinkType } from '../links/payment-link-type.entity';
import { Customer } from './customer.entity';
import { Order } from './order.entity';
import { ORDER_CREATED_EVENT, OrderStatus } from './order-status';
import { OrderPayment } from './order-payment.entity';
import { CardDetail } from './card-detail.entity';
import type { Frequency } from '../links/frequency.entity';
import type { CaptureMethod } from '../links/capture-method';

/** What an order is created with, all validated (on a payment link: the link as read and checked, and a subscription's terms). */
export interface NewOrder {
  environmentId: number;
  email: string;
  firstName: string;
  lastName: string;
  mobile: string;
  country: string;
  reference: string;
  processorReference: string;
  paymentReference: string;
  expiresAt: Date | null;
  amount: string;
  currency: string;
  fee: string;
  feeRate: string;
  subsidiaryFee: string;
  customerFee: string;
  totalChargedAmount: string;
  narration: string;
  redirectUrl: string;
  ipAddress: string | null;
  captureMethod: CaptureMethod;
  /** An order on a payment link: the link (with its type) as OrderLinkReads read it, checked by its rules. */
  paymentLink?: PaymentLink | null;
  /** The link's row version when it was read: nothing is written when the link changed since. */
  paymentLinkVersion?: string | null;
  /** A subscription's terms (orders on a SUB link). */
  frequency?: Frequency | null;
  numberOfPayments?: number | null;
}

/** The order's columns order/status shows (orderStatusView in src/rest). */
const STATUS_COLUMNS = [
  'id',
  'environment_id',
  'reference',
  'payment_reference',
  'payment_link_id',
  'customer_id',
  'total_charged_amount',
  'status_id',
  'currency',
  'fee',
  'subsidiary_fee',
  'customer_fee',
  'payment_method',
  'payment_response_code',
  'payment_response_message',
  'provider_response_date',
  'date_payment_confirmed',
  'narration',
  'remarks',
  'created_at',
  'updated_at',
] as const;

/** The order as order/status reads it: only the columns its answer shows (relations as references holding their id). */
export type OrderStatusRead = Pick<
  Order,
  | 'id'
  | 'environment'
  | 'reference'
  | 'paymentReference'
  | 'paymentLink'
  | 'customer'
  | 'totalChargedAmount'
  | 'statusId'
  | 'currency'
  | 'fee'
  | 'subsidiaryFee'
  | 'customerFee'
  | 'paymentMethod'
  | 'paymentResponseCode'
  | 'paymentResponseMessage'
  | 'providerResponseDate'
  | 'datePaymentConfirmed'
  | 'narration'
  | 'remarks'
  | 'createdAt'
  | 'updatedAt'
>;

/**
 * The columns the order details (orderDetailsView, what order/verify answers) read, per table;
 * the customer's name, e-mail, mobile and country for orders written before snapshots.
 */
const DETAILS_COLUMNS = {
  order: [
    'id',
    'reference',
    'payment_reference',
    'narration',
    'remarks',
    'total_charged_amount',
    'status_id',
    'payment_method',
    'payment_response_code',
    'payment_response_message',
    'currency',
    'recurring_payment_id',
    'recurring_payment_reference',
    'fee',
    'fee_rate',
    'subsidiary_fee',
    'customer_fee',
    'created_at',
    'updated_at',
    'date_payment_confirmed',
    'customer_email',
    'customer_first_name',
    'customer_last_name',
    'customer_mobile',
    'customer_country',
  ],
  customer: ['id', 'email', 'first_name', 'last_name', 'mobile', 'country', 'is_blacklisted', 'reason_blacklisted', 'date_created', 'date_updated'],
  link: ['id', 'environment_id', 'name', 'description', 'reference', 'amount', 'currency', 'logo', 'customer_limit', 'is_active', 'date_created'],
  linkType: ['id', 'code', 'payment_link_name'],
  payment: [
    'id',
    'reference',
    'payment_option_id',
    'payment_option',
    'status_id',
    'response_code',
    'response_message',
    'instrument',
    'remarks',
    'date_created',
    'date_updated',
  ],
  card: [
    'id',
    'order_payment_id',
    'environment_id',
    'status',
    'country',
    'card_token',
    'card_expiry_month',
    'card_expiry_year',
    'card_type',
    'card_issuer',
    'card_first_six_digits',
    'card_last_four_digits',
    'date_created',
  ],
} as const;

/** How the rows of an order read (aggregateSelect) become the order, its payments and cards. */
interface AggregateMappers {
  order: EntityRowMapper<Order>;
  customer: EntityRowMapper<Customer>;
  link: EntityRowMapper<PaymentLink>;
  linkType: EntityRowMapper<PaymentLinkType>;
  payment: EntityRowMapper<OrderPayment>;
  card: EntityRowMapper<CardDetail>;
}

/** The order of (environment $1, reference $2) with its customer, link and type, payments and cards: one row per (payment, card). */
function aggregateSelect(mappers: EntityRowMapper<object>[]): string {
  return `select ${mappers.map((m) => m.selectList).join(', ')}
          from checkout_order o
          left join customer c on c.id = o.customer_id
          left join payment_link l on l.id = o.payment_link_id
          left join payment_link_type t on t.id = l.type_id
          left join order_payment p on p.order_id = o.id
          left join card_detail d on d.order_payment_id = p.id
         where o.environment_id = $1::int and o.reference = $2::varchar
         order by p.id, d.id`;
}

/** Runs one statement with `?` placeholders, e.g. in the caller's transaction. */
export type ExecuteSql = (sql: string, params: unknown[]) => Promise<Row[]>;

export const CREATED_RESPONSE_CODE = '01';
export const CREATED_RESPONSE_MESSAGE = 'Created order successfully';

/**
 * The order hot paths' SQL, each one prepared statement (one round trip): creating an
 * order (customer upsert, order, timeline entry) and reading an order with everything its
 * read models need. The rules stay in OrderService; this only stores and loads, and what it
 * returns has the shape of the entities (EntityRowMapper), so every presenter is unchanged.
 */
export class OrderQueries {
  private readonly order: EntityRowMapper<Order>;
  private readonly customer: EntityRowMapper<Customer>;
  private readonly link: EntityRowMapper<PaymentLink>;
  private readonly linkType: EntityRowMapper<PaymentLinkType>;
  private readonly payment: EntityRowMapper<OrderPayment>;
  private readonly card: EntityRowMapper<CardDetail>;
  private readonly subsidiary: EntityRowMapper<Subsidiary>;
  private readonly createStatement: PreparedStatement;
  private readonly aggregateStatement: PreparedStatement;
  private readonly subsidiaryStatement: PreparedStatement;
  private readonly statusOrder: EntityRowMapper<Order>;
  private readonly statusStatement: PreparedStatement;
  private readonly wide: AggregateMappers;
  private readonly details: AggregateMappers;
  private readonly detailsStatement: PreparedStatement;
  private readonly run: RunSql;

  constructor(orm: MikroORM) {
    this.run = sqlRunner(orm);
    this.order = new EntityRowMapper(orm, Order, 'o');
    this.customer = new EntityRowMapper(orm, Customer, 'c');
    this.link = new EntityRowMapper(orm, PaymentLink, 'l');
    this.linkType = new EntityRowMapper(orm, PaymentLinkType, 't');
    this.payment = new EntityRowMapper(orm, OrderPayment, 'p');
    this.card = new EntityRowMapper(orm, CardDetail, 'd');
    this.subsidiary = new EntityRowMapper(orm, Subsidiary, 's');

    // One customer per e-mail and environment (unique in the database). An existing one is
    // used as it is; a new one is inserted; when a concurrent create inserts the same e-mail
    // first (invisible to this statement's snapshot), ON CONFLICT DO UPDATE waits for it and
    // returns its row, changing nothing (the e-mail is set to itself).
    this.createStatement = {
      name: 'pgw_order_create_v4',
      text: `with link_as_read as (
          select 1 where $26::xid is null or exists (select 1 from payment_link where id = $23::int and xmin = $26::xid)
        ), existing as (
          select ${this.customer.selectList} from customer c where c.environment_id = $1::int and c.email = $2::varchar
        ), inserted as (
          insert into customer as c (environment_id, email, first_name, last_name, mobile, country)
          select $1::int, $2::varchar, $3::varchar, $4::varchar, $5::varchar, $6::char(2)
           where not exists (select 1 from existing) and exists (select 1 from link_as_read)
          on conflict (environment_id, email) do update set email = excluded.email
          returning ${this.customer.selectList}
        ), cust as (
          select * from existing union all select * from inserted
        ), ord as (
          insert into checkout_order (environment_id, reference, processor_reference, payment_reference, customer_id,
            customer_email, customer_first_name, customer_last_name, customer_mobile, customer_country, expires_at,
            amount, currency, fee, fee_rate, subsidiary_fee, customer_fee, total_charged_amount, status_id, narration, remarks,
            redirect_url, payment_response_code, payment_response_message, ip_address, event_sequence, version, created_at, updated_at, capture_method,
            payment_link_id, frequency_id, number_of_payments)
          select $1::int, $7::varchar, $8::varchar, $9::varchar, cust.c__id,
            $2::varchar, $3::varchar, $4::varchar, $5::varchar, $6::char(2), $10::timestamptz,
            $11::numeric, $12::char(3), $13::numeric, $14::numeric, $15::numeric, $16::numeric, $17::numeric, ${OrderStatus.Initiated}, $18::text, '',
            $19::text, '${CREATED_RESPONSE_CODE}', '${CREATED_RESPONSE_MESSAGE}', $20::varchar, 0, 1, $21::timestamptz, $21::timestamptz, $22::text,
            $23::int, $24::int, $25::int
          from cust where exists (select 1 from link_as_read)
          returning id
        ), timeline as (
          insert into timeline_event (order_id, event, source, description, created_at)
          select id, '${ORDER_CREATED_EVENT}', 'system', 'Order created', $21::timestamptz from ord
        )
        select ord.id as order_id, cust.* from ord, cust`,
    };

    this.wide = { order: this.order, customer: this.customer, link: this.link, linkType: this.linkType, payment: this.payment, card: this.card };
    this.aggregateStatement = { name: 'pgw_order_aggregate_v1', text: aggregateSelect(Object.values(this.wide)) };

    // order/status: the order's own columns its answer shows (orderStatusView), no join.
    this.statusOrder = new EntityRowMapper(orm, Order, { alias: 'o', columns: STATUS_COLUMNS, prefix: 's_' });
    this.statusStatement = {
      name: 'pgw_order_status_v1',
      text: `select ${this.statusOrder.selectList} from checkout_order o where o.environment_id = $1::int and o.reference = $2::varchar`,
    };

    // order/verify: the columns of the order details (orderDetailsView) and nothing else.
    const narrow = <T extends object>(entity: new () => T, alias: string, columns: readonly string[]) =>
      new EntityRowMapper(orm, entity, { alias, columns, prefix: `${alias}_` });
    this.details = {
      order: narrow(Order, 'o', DETAILS_COLUMNS.order),
      customer: narrow(Customer, 'c', DETAILS_COLUMNS.customer),
      link: narrow(PaymentLink, 'l', DETAILS_COLUMNS.link),
      linkType: narrow(PaymentLinkType, 't', DETAILS_COLUMNS.linkType),
      payment: narrow(OrderPayment, 'p', DETAILS_COLUMNS.payment),
      card: narrow(CardDetail, 'd', DETAILS_COLUMNS.card),
    };
    this.detailsStatement = { name: 'pgw_order_details_v1', text: aggregateSelect(Object.values(this.details)) };

    this.subsidiaryStatement = { name: 'pgw_subsidiary_v1', text: `select ${this.subsidiary.selectList} from subsidiary s where s.id = $1::int` };
  }

  /** Inserts an order with its customer and timeline entry in one statement; the order as the entity would hold it, or null (nothing written) when its link is no longer at `paymentLinkVersion`. */
  async insertOrder(o: NewOrder): Promise<Order | null> {
    const now = new Date();
    const rows = await this.run(this.createStatement, [
      o.environmentId,
      o.email,
      o.firstName,
      o.lastName,
      o.mobile,
      o.country,
      o.reference,
      o.processorReference,
      o.paymentReference,
      o.expiresAt,
      o.amount,
      o.currency,
      o.fee,
      o.feeRate,
      o.subsidiaryFee,
      o.customerFee,
      o.totalChargedAmount,
      o.narration,
      o.redirectUrl,
      o.ipAddress,
      now,
      o.captureMethod,
      o.paymentLink?.id ?? null,
      o.frequency?.id ?? null,
      o.numberOfPayments ?? null,
      o.paymentLink ? (o.paymentLinkVersion ?? null) : null,
    ]);
    const row = rows[0];
    if (!row && o.paymentLink && o.paymentLinkVersion) return null;
    if (!row) throw new Error('order create: no row returned');
    // Every property as the entity would hold it after the insert, as a plain object (see EntityRowMapper).
    const order: Omit<Order, typeof OptionalProps> = {
      id: row.order_id as number,
      environment: { id: o.environmentId } as AppEnvironment,
      reference: o.reference,
      processorReference: o.processorReference,
      paymentReference: o.paymentReference,
      customer: this.customer.map(row),
      customerEmail: o.email,
      customerFirstName: o.firstName,
      customerLastName: o.lastName,
      customerMobile: o.mobile,
      customerCountry: o.country,
      expiresAt: o.expiresAt,
      captureMethod: o.captureMethod,
      authorizedAt: null,
      authorizedAmount: null,
      amount: o.amount,
      currency: o.currency,
      fee: o.fee,
      feeRate: o.feeRate,
      subsidiaryFee: o.subsidiaryFee,
      customerFee: o.customerFee,
      totalChargedAmount: o.totalChargedAmount,
      statusId: OrderStatus.Initiated,
      narration: o.narration,
      remarks: '',
      redirectUrl: o.redirectUrl,
      paymentMethod: null,
      paymentResponseCode: CREATED_RESPONSE_CODE,
      paymentResponseMessage: CREATED_RESPONSE_MESSAGE,
      paymentLink: o.paymentLink ?? null,
      frequency: o.frequency ?? null,
      numberOfPayments: o.numberOfPayments ?? null,
      recurringPaymentId: null,
      recurringPaymentReference: null,
      ipAddress: o.ipAddress,
      providerResponseDate: null,
      datePaymentConfirmed: null,
      eventSequence: 0,
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    return order as Order;
  }

  /** The order of (environment, reference) with its customer, link and type, payments and cards (by id); null when there is none. */
  async findAggregate(environmentId: number, reference: string): Promise<{ order: Order; payments: OrderPayment[]; cards: CardDetail[] } | null> {
    const rows = await this.run(this.aggregateStatement, [environmentId, reference]);
    return this.assemble(rows, this.wide);
  }

  /** What order/status shows of the order of (environment, reference), in one narrow statement; null when there is none. */
  async findStatus(environmentId: number, reference: string): Promise<OrderStatusRead | null> {
    const rows = await this.run(this.statusStatement, [environmentId, reference]);
    return rows[0] ? this.statusOrder.map(rows[0]) : null;
  }

  /**
   * What order/verify shows of the order of (environment, reference): the order details'
   * columns of the order, its customer, link and type, payments and cards, in one narrow
   * statement; the objects hold only those columns (the order details view reads no other).
   */
  async findDetails(environmentId: number, reference: string): Promise<{ order: Order; payments: OrderPayment[]; cards: CardDetail[] } | null> {
    return this.assemble(await this.run(this.detailsStatement, [environmentId, reference]), this.details);
  }

  private assemble(rows: Row[], m: AggregateMappers): { order: Order; payments: OrderPayment[]; cards: CardDetail[] } | null {
    const first = rows[0];
    if (!first) return null;
    const order = m.order.map(first)!;
    order.customer = m.customer.map(first);
    const link = m.link.map(first);
    if (link) link.type = m.linkType.map(first)!;
    order.paymentLink = link;
    const payments: OrderPayment[] = [];
    const cards: CardDetail[] = [];
    for (const row of rows) {
      const payment = m.payment.map(row);
      if (payment && payments[payments.length - 1]?.id !== payment.id) payments.push(payment);
      const card = m.card.map(row);
      if (card) cards.push(card);
    }
    cards.sort((a, b) => a.id - b.id);
    return { order, payments, cards };
  }

  /**
   * The payments of an order with their cards (by id), in one statement run by `execute` (the
   * caller's transaction: a settlement reads what it has just written).
   */
  async paymentsOf(execute: ExecuteSql, orderId: number): Promise<{ payments: OrderPayment[]; cards: CardDetail[] }> {
    const rows = await execute(
      `select ${this.payment.selectList}, ${this.card.selectList}
         from order_payment p left join card_detail d on d.order_payment_id = p.id where p.order_id = ? order by p.id, d.id`,
      [orderId],
    );
    const payments: OrderPayment[] = [];
    const cards: CardDetail[] = [];
    for (const row of rows) {
      const payment = this.payment.map(row)!;
      if (payments[payments.length - 1]?.id !== payment.id) payments.push(payment);
      const card = this.card.map(row);
      if (card) cards.push(card);
    }
    cards.sort((a, b) => a.id - b.id);
    return { payments, cards };
  }

  /** The merchant record (without its sealed secret), read by `execute` (see paymentsOf). */
  async findSubsidiaryBy(execute: ExecuteSql, id: number): Promise<Subsidiary | null> {
    const rows = await execute(`select ${this.subsidiary.selectList} from subsidiary s where s.id = ?`, [id]);
    return rows[0] ? this.subsidiary.map(rows[0]) : null;
  }

  /** The merchant record (without its sealed secret). */
  async findSubsidiary(id: number): Promise<Subsidiary | null> {
    const rows = await this.run(this.subsidiaryStatement, [id]);
    return rows[0] ? this.subsidiary.map(rows[0]) : null;
  }
}
