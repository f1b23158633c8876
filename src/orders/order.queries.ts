import type { OptionalProps } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlRunner, type PreparedStatement, type RunSql } from '../db/sql';
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
import type { CaptureMethod } from '../links/capture-method';

/** What a plain order (no payment link, no subscription) is created with, all validated. */
export interface NewPlainOrder {
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
}

export const CREATED_RESPONSE_CODE = '01';
export const CREATED_RESPONSE_MESSAGE = 'Created order successfully';

/**
 * The order hot paths' SQL, each one prepared statement (one round trip): creating a plain
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
      name: 'pgw_order_create_v2',
      text: `with existing as (
          select ${this.customer.selectList} from customer c where c.environment_id = $1::int and c.email = $2::varchar
        ), inserted as (
          insert into customer as c (environment_id, email, first_name, last_name, mobile, country)
          select $1::int, $2::varchar, $3::varchar, $4::varchar, $5::varchar, $6::char(2) where not exists (select 1 from existing)
          on conflict (environment_id, email) do update set email = excluded.email
          returning ${this.customer.selectList}
        ), cust as (
          select * from existing union all select * from inserted
        ), ord as (
          insert into checkout_order (environment_id, reference, processor_reference, payment_reference, customer_id,
            customer_email, customer_first_name, customer_last_name, customer_mobile, customer_country, expires_at,
            amount, currency, fee, fee_rate, subsidiary_fee, customer_fee, total_charged_amount, status_id, narration, remarks,
            redirect_url, payment_response_code, payment_response_message, ip_address, event_sequence, version, created_at, updated_at, capture_method)
          select $1::int, $7::varchar, $8::varchar, $9::varchar, cust.c__id,
            $2::varchar, $3::varchar, $4::varchar, $5::varchar, $6::char(2), $10::timestamptz,
            $11::numeric, $12::char(3), $13::numeric, $14::numeric, $15::numeric, $16::numeric, $17::numeric, ${OrderStatus.Initiated}, $18::text, '',
            $19::text, '${CREATED_RESPONSE_CODE}', '${CREATED_RESPONSE_MESSAGE}', $20::varchar, 0, 1, $21::timestamptz, $21::timestamptz, $22::text
          from cust
          returning id
        ), timeline as (
          insert into timeline_event (order_id, event, source, description, created_at)
          select id, '${ORDER_CREATED_EVENT}', 'system', 'Order created', $21::timestamptz from ord
        )
        select ord.id as order_id, cust.* from ord, cust`,
    };

    this.aggregateStatement = {
      name: 'pgw_order_aggregate_v1',
      text: `select ${[this.order, this.customer, this.link, this.linkType, this.payment, this.card].map((m) => m.selectList).join(', ')}
          from checkout_order o
          left join customer c on c.id = o.customer_id
          left join payment_link l on l.id = o.payment_link_id
          left join payment_link_type t on t.id = l.type_id
          left join order_payment p on p.order_id = o.id
          left join card_detail d on d.order_payment_id = p.id
         where o.environment_id = $1::int and o.reference = $2::varchar
         order by p.id, d.id`,
    };

    this.subsidiaryStatement = { name: 'pgw_subsidiary_v1', text: `select ${this.subsidiary.selectList} from subsidiary s where s.id = $1::int` };
  }

  /** Inserts a plain order with its customer and timeline entry in one statement; the order as the entity would hold it. */
  async insertPlainOrder(o: NewPlainOrder): Promise<Order> {
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
    ]);
    const row = rows[0];
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
      paymentLink: null,
      frequency: null,
      numberOfPayments: null,
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
    const first = rows[0];
    if (!first) return null;
    const order = this.order.map(first)!;
    order.customer = this.customer.map(first);
    const link = this.link.map(first);
    if (link) link.type = this.linkType.map(first)!;
    order.paymentLink = link;
    const payments: OrderPayment[] = [];
    const cards: CardDetail[] = [];
    for (const row of rows) {
      const payment = this.payment.map(row);
      if (payment && payments[payments.length - 1]?.id !== payment.id) payments.push(payment);
      const card = this.card.map(row);
      if (card) cards.push(card);
    }
    cards.sort((a, b) => a.id - b.id);
    return { order, payments, cards };
  }

  /** The merchant record (without its sealed secret). */
  async findSubsidiary(id: number): Promise<Subsidiary | null> {
    const rows = await this.run(this.subsidiaryStatement, [id]);
    return rows[0] ? this.subsidiary.map(rows[0]) : null;
  }
}
