import type { MikroORM } from '@mikro-orm/postgresql';
import { validationError } from '../shared/errors';
import { isQueryableDate } from '../shared/time';
import { callerOf, type Tenant } from '../merchants/tenant';
import { PaymentLink } from '../links/payment-link.entity';
import { PaymentLinkType } from '../links/payment-link-type.entity';
import { Order } from './order.entity';
import { Customer } from './customer.entity';
import { OrderPayment } from './order-payment.entity';
import { CardDetail } from './card-detail.entity';
import { paymentMethodCodes, type OrderListFilter } from './order-filter';
import { boundedCount, Conditions, pageAndCount, type Counted, type Row, type RunSql } from '../db/sql';
import type { ReadRouting } from '../db/read-routing';
import { EntityRowMapper, selectColumns, type RowColumns } from '../db/row-mapper';
import { LINK_TYPE_ROW, linkRowAs } from '../links/link-row';
import type { SummaryCell } from './order-summary';

/** An order of a list page: the columns every read model of an order shows, no entity behind it. */
export interface ListedOrder {
  order: Order;
  payments: OrderPayment[];
  cards: CardDetail[];
}

const BASE_COLUMNS: RowColumns = {
  alias: 'o',
  prefix: '',
  columns: [
    'id',
    'reference',
    'payment_reference',
    'narration',
    'remarks',
    'amount',
    'total_charged_amount',
    'fee',
    'fee_rate',
    'subsidiary_fee',
    'customer_fee',
    'currency',
    'status_id',
    'payment_method',
    'payment_response_code',
    'payment_response_message',
    'recurring_payment_id',
    'recurring_payment_reference',
    'customer_email',
    'customer_first_name',
    'customer_last_name',
    'customer_mobile',
    'customer_country',
    'created_at',
    'updated_at',
    'date_payment_confirmed',
    'environment_id',
    'capture_method',
    'authorized_amount',
  ],
};
const CUSTOMER_COLUMNS: RowColumns = {
  alias: 'c',
  prefix: 'c_',
  columns: ['id', 'email', 'first_name', 'last_name', 'mobile', 'country', 'is_blacklisted', 'reason_blacklisted', 'date_created', 'date_updated'],
};
// The link's columns are the link lists' own (links/link-row.ts), under the prefix `l_`.
const LINK_COLUMNS = linkRowAs('l_');

/** Every column a list row of an order reads (the order, its customer record, its link and link type). */
export const ORDER_COLUMNS = [BASE_COLUMNS, CUSTOMER_COLUMNS, LINK_COLUMNS, LINK_TYPE_ROW].map(selectColumns).join(', ');

/** What a list page reads beyond the order's own columns (only what the query asked for). */
export interface OrderListWants {
  count: boolean;
  payments: boolean;
  /** The customer record (id, blacklisting, dates): the `customer` field. Default true. */
  customer?: boolean;
  /** The payment link and its type: paymentLink, paymentLinkId, paymentLinkReference, productName. Default true. */
  paymentLink?: boolean;
}

/** Reads an order list row as the plain object the read models use (the fields of `Order` they read). */
class ListedOrderMapper {
  private readonly order: EntityRowMapper<Order>;
  private readonly customer: EntityRowMapper<Customer>;
  private readonly link: EntityRowMapper<PaymentLink>;
  private readonly linkType: EntityRowMapper<PaymentLinkType>;

  constructor(orm: MikroORM) {
    this.order = new EntityRowMapper(orm, Order, BASE_COLUMNS);
    this.customer = new EntityRowMapper(orm, Customer, CUSTOMER_COLUMNS);
    this.link = new EntityRowMapper(orm, PaymentLink, LINK_COLUMNS);
    this.linkType = new EntityRowMapper(orm, PaymentLinkType, LINK_TYPE_ROW);
  }

  /** The SELECT list: the order's columns, and its customer's and link's when joined. */
  selectList(want: { customer: boolean; link: boolean }): string {
    return [
      this.order.selectList,
      ...(want.customer ? [this.customer.selectList] : []),
      ...(want.link ? [this.link.selectList, this.linkType.selectList] : []),
    ].join(', ');
  }

  map(r: Row): Order {
    const order = this.order.map(r)!;
    order.customer = this.customer.map(r);
    const paymentLink = this.link.map(r);
    if (paymentLink) paymentLink.type = this.linkType.map(r)!;
    order.paymentLink = paymentLink;
    return order;
  }
}

const DAY_MS = 86_400_000;
const utcDay = (d: Date) => d.toISOString().slice(0, 10);

/**
 * The order lists and dashboard figures, read with plain SQL (no entity hydration, no identity
 * map): keyset pages on the (environment, created_at, id) indexes, bounded counts, and the
 * summary table. docs/performance.md, "Lists at scale", says how each stays flat at a million orders.
 */
export class OrderLists {
  private readonly rows: ListedOrderMapper;
  private readonly payment: EntityRowMapper<OrderPayment>;
  private readonly card: EntityRowMapper<CardDetail>;

  /** `reads`: where the lists and figures are read (the read replica, unless the caller wrote lately); the roll-up writes to the primary. */
  constructor(
    private readonly orm: MikroORM,
    private readonly reads: ReadRouting,
  ) {
    this.rows = new ListedOrderMapper(orm);
    this.payment = new EntityRowMapper(orm, OrderPayment, 'p');
    this.card = new EntityRowMapper(orm, CardDetail, 'd');
  }

  /** The filter's SQL: `filter` is checked (orderListFilter), so each value is known and in range. */
  private conditions(tenant: Tenant, filter: OrderListFilter): Conditions {
    const where = new Conditions().add('o.environment_id = ?', tenant.environmentId);
    if (filter.paymentLinkId) where.add('o.payment_link_id = ?', filter.paymentLinkId);
    if (filter.currency) where.add('o.currency = ?', filter.currency);
    if (filter.createdFrom) where.add('o.created_at >= ?', filter.createdFrom);
    if (filter.createdTo) where.add('o.created_at < ?', filter.createdTo);
    if (filter.paymentMethod !== undefined) {
      const codes = paymentMethodCodes(filter.paymentMethod);
      const named = codes.filter((c): c is string => c !== null);
      const nullToo = codes.includes(null);
      if (named.length === 0 && !nullToo) where.add('false');
      else if (nullToo)
        where.add(
          named.length ? `(o.payment_method is null or o.payment_method in (${named.map(() => '?').join(', ')}))` : 'o.payment_method is null',
          ...named,
        );
      else if (named.length === 1) where.add('o.payment_method = ?', named[0]);
      else where.add(`o.payment_method in (${named.map(() => '?').join(', ')})`, ...named);
    }
    if (filter.search) {
      const like = `${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.add('(o.reference like ? or o.customer_email = ?)', like, filter.search.toLowerCase());
    }
    return where;
  }

  /**
   * A keyset page of the tenant's orders, newest first, in at most three queries (page, and
   * payments and cards when asked for); and `count` when asked for.
   */
  async page(
    tenant: Tenant,
    filter: OrderListFilter,
    limit: number,
    after: { createdAt: Date; id: number } | undefined,
    want: OrderListWants,
  ): Promise<{ rows: ListedOrder[] } & Partial<Counted>> {
    const where = this.conditions(tenant, filter);
    const statusIds = filter.statusIds ?? [];
    const run = this.reads.for(callerOf(tenant));
    let rows: Row[];
    let counted: Counted | undefined;
    if (want.count && limit > 0) {
      // Page and count in one statement (one round trip).
      ({ rows, ...counted } = await pageAndCount(
        run,
        { ...this.pageStatement(where, statusIds, limit, after, want), order: 'p.created_at desc, p.id desc', key: 'id' },
        this.countStatement(where, statusIds),
      ));
    } else if (limit > 0) {
      const page = this.pageStatement(where, statusIds, limit, after, want);
      rows = await run(page.sql, page.params);
    } else {
      rows = [];
      if (want.count) counted = await this.count(run, where, statusIds);
    }
    const orders = rows.map((r) => this.rows.map(r));
    let listed: ListedOrder[] = orders.map((order) => ({ order, payments: [], cards: [] }));
    if (want.payments && orders.length > 0) listed = await this.withPayments(run, orders);
    return { rows: listed, ...counted };
  }

  /** The page's SELECT: the ids of the page from the index (one ordered scan per status), then their rows and the joins asked for. */
  private pageStatement(
    where: Conditions,
    statusIds: number[],
    limit: number,
    after: { createdAt: Date; id: number } | undefined,
    want: OrderListWants,
  ): { sql: string; params: unknown[] } {
    const keyset = after ? ' and (o.created_at, o.id) < (?, ?)' : '';
    const keysetParams = after ? [after.createdAt, after.id] : [];
    // One status: its index gives the order. Several: one ordered, limited scan per status
    // (each on its index), merged; `status_id in (…)` would sort every matching row instead.
    const branches = (statusIds.length ? statusIds : [null]).map((statusId) => ({
      sql: `(select o.id, o.created_at from checkout_order o where ${where.sql}${statusId === null ? '' : ' and o.status_id = ?'}${keyset} order by o.created_at desc, o.id desc limit ?)`,
      params: [...where.params, ...(statusId === null ? [] : [statusId]), ...keysetParams, limit],
    }));
    const ids =
      branches.length === 1
        ? branches[0]!
        : {
            sql: `(select id, created_at from (${branches.map((b) => b.sql).join(' union all ')}) u order by created_at desc, id desc limit ?)`,
            params: [...branches.flatMap((b) => b.params), limit],
          };
    const customer = want.customer !== false;
    const link = want.paymentLink !== false;
    return {
      sql: `select ${this.rows.selectList({ customer, link })}
         from ${ids.sql} p join checkout_order o on o.id = p.id
         ${customer ? 'left join customer c on c.id = o.customer_id' : ''}
         ${link ? 'left join payment_link l on l.id = o.payment_link_id left join payment_link_type t on t.id = l.type_id' : ''}
        order by o.created_at desc, o.id desc`,
      params: ids.params,
    };
  }

  /** The `select 1` of every matching order, for the bounded count. */
  private countStatement(where: Conditions, statusIds: number[]): { selectOne: string; params: unknown[] } {
    const status = statusIds.length ? ` and o.status_id in (${statusIds.map(() => '?').join(', ')})` : '';
    return { selectOne: `select 1 from checkout_order o where ${where.sql}${status}`, params: [...where.params, ...statusIds] };
  }

  /** Exact up to EXACT_COUNT_BOUND, PostgreSQL's estimate beyond. */
  private async count(run: RunSql, where: Conditions, statusIds: number[]): Promise<Counted> {
    const { selectOne, params } = this.countStatement(where, statusIds);
    return boundedCount(run, selectOne, params);
  }

  /** The orders' payments and their cards, by id, from where the page was read. */
  private async withPayments(run: RunSql, orders: Order[]): Promise<ListedOrder[]> {
    const ids = orders.map((o) => o.id);
    const rows = await run(
      `select ${this.payment.selectList}, ${this.card.selectList}
         from order_payment p left join card_detail d on d.order_payment_id = p.id
        where p.order_id = any(?::int[]) order by p.id, d.id`,
      [ids],
    );
    const payments: OrderPayment[] = [];
    const cards: CardDetail[] = [];
    for (const row of rows) {
      const payment = this.payment.map(row);
      if (payment && payments[payments.length - 1]?.id !== payment.id) payments.push(payment);
      const card = this.card.map(row);
      if (card) cards.push(card);
    }
    cards.sort((a, b) => a.id - b.id);
    return orders.map((order) => {
      const own = payments.filter((p) => p.order.id === order.id);
      const paymentIds = new Set(own.map((p) => p.id));
      return { order, payments: own, cards: cards.filter((c) => paymentIds.has(c.orderPayment.id)) };
    });
  }

  /**
   * The dashboard's cells over [from, to): whole UTC days from the summary table (plus the
   * delta rows not rolled up yet), the partial days at either end from the orders themselves.
   */
  async summaryCells(tenant: Tenant, from: Date, to: Date): Promise<SummaryCell[]> {
    if (!isQueryableDate(from)) throw validationError('The From field must be a date between the years 1 and 9999.');
    if (!isQueryableDate(to)) throw validationError('The To field must be a date between the years 1 and 9999.');
    const env = tenant.environmentId;
    const run = this.reads.for(callerOf(tenant));
    const firstWhole = new Date(Math.ceil(from.getTime() / DAY_MS) * DAY_MS);
    const endWhole = new Date(Math.floor(to.getTime() / DAY_MS) * DAY_MS);
    const parts: string[] = [];
    const params: unknown[] = [];
    const raw = (a: Date, b: Date) => {
      parts.push(`select (created_at at time zone 'UTC')::date as day, currency, coalesce(payment_method, '') as payment_method, status_id, 1 as count, amount, fee as fees
                    from checkout_order where environment_id = ? and created_at >= ? and created_at < ?`);
      params.push(env, a, b);
    };
    let deltaRows = 0;
    if (firstWhole < endWhole) {
      const [deltas] = await run<{ n: number }>(`select count(*)::int as n from order_summary_delta where environment_id = ? and day >= ? and day < ?`, [
        env,
        utcDay(firstWhole),
        utcDay(endWhole),
      ]);
      deltaRows = deltas?.n ?? 0;
      // Fold a long backlog first. The deltas are read in the same statement as the summary all
      // the same: a roll-up held by another instance, or one batch short of the backlog, leaves
      // some behind, and one statement sees each change exactly once (a roll-up is atomic).
      if (deltaRows > 1000) await this.rollUp();
      parts.push(`select day, currency, payment_method, status_id, count, amount, fees from order_summary where environment_id = ? and day >= ? and day < ?`);
      params.push(env, utcDay(firstWhole), utcDay(endWhole));
      if (deltaRows > 0) {
        parts.push(
          `select day, currency, payment_method, status_id, count, amount, fees from order_summary_delta where environment_id = ? and day >= ? and day < ?`,
        );
        params.push(env, utcDay(firstWhole), utcDay(endWhole));
      }
      if (from < firstWhole) raw(from, firstWhole);
      if (endWhole < to) raw(endWhole, to);
    } else {
      raw(from, to);
    }
    const rows = await run<{ day: string; currency: string; payment_method: string; status_id: number; count: string; amount: string; fees: string }>(
      `select to_char(day, 'YYYY-MM-DD') as day, currency, payment_method, status_id, sum(count)::bigint as count, sum(amount)::text as amount, sum(fees)::text as fees
         from (${parts.join(' union all ')}) s group by day, currency, payment_method, status_id having sum(count) <> 0
        order by day, currency, payment_method, status_id`,
      params,
    );
    return rows.map((r) => ({
      day: r.day,
      currency: r.currency.trim(),
      paymentMethod: r.payment_method,
      statusId: r.status_id,
      count: Number(r.count),
      amount: r.amount,
      fees: r.fees,
    }));
  }

  /**
   * Folds the delta rows into `order_summary`. One instance at a time (an advisory lock; the
   * others skip); deltas of transactions not committed yet stay for the next roll-up.
   */
  async rollUp(batch = 100_000): Promise<number> {
    return this.orm.em.fork().transactional(async (em) => {
      const conn = em.getConnection();
      const ctx = em.getTransactionContext();
      const [lock] = await conn.execute<Array<{ locked: boolean }>>(
        `select pg_try_advisory_xact_lock(hashtext('order_summary_rollup')) as locked`,
        [],
        'all',
        ctx,
      );
      if (!lock?.locked) return 0;
      const [moved] = await conn.execute<Array<{ n: number }>>(
        `with moved as (
           delete from order_summary_delta where id in (select id from order_summary_delta order by id limit ?)
           returning environment_id, day, currency, payment_method, status_id, count, amount, fees
         ), folded as (
           insert into order_summary (environment_id, day, currency, payment_method, status_id, count, amount, fees)
           select environment_id, day, currency, payment_method, status_id, sum(count), sum(amount), sum(fees) from moved
            group by environment_id, day, currency, payment_method, status_id
           on conflict (environment_id, day, currency, payment_method, status_id) do update
             set count = order_summary.count + excluded.count, amount = order_summary.amount + excluded.amount, fees = order_summary.fees + excluded.fees
           returning 1
         )
         select (select count(*) from moved)::int as n, (select count(*) from folded) as f`,
        [batch],
        'all',
        ctx,
      );
      return moved?.n ?? 0;
    });
  }
}
