import { isIP } from 'node:net';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { DomainError, requiredField, unsupported, validationError } from '../shared/errors';
import { amountError, currencyOf, parseAmount } from '../shared/money';
import { requireSupportedCountry } from '../shared/countries';
import { randomReference } from '../shared/random';
import { isEmail, isHttpUrl } from '../shared/validation';
import { trimmedText } from '../shared/input';
import type { Tenant } from '../merchants/tenant';
import { authorize } from '../merchants/authorization';
import { Subsidiary } from '../merchants/subsidiary.entity';
import { linkNotFound } from '../links/link-errors';
import { MAX_NUMBER_OF_PAYMENTS } from '../links/payment-link-input';
import { readCaptureMethod, type CaptureMethod } from '../links/capture-method';
import { checkOrderOnLink, subscriptionTermsOnly, type OrderOnLink, type SubscriptionTerms } from '../links/link-usage';
import type { PaymentLink } from '../links/payment-link.entity';
import type { Frequency } from '../links/frequency.entity';
import type { FeeService } from '../fees/fee.service';
import { orderNotFound } from './order-status';
import { Order } from './order.entity';
import { OrderPayment } from './order-payment.entity';
import { CardDetail } from './card-detail.entity';
import { OrderQueries, type ExecuteSql, type OrderStatusRead } from './order.queries';
import { OrderLinkReads } from './order-link-reads';
import { isUniqueViolation, type Counted } from '../db/sql';
import type { ScopedCache, TenantCaches } from '../merchants/tenant-cache';
import type { ReadRouting } from '../db/read-routing';
import { OrderLists, type ListedOrder, type OrderListWants } from './order-lists';
import { dashboardSummaryOf, type DashboardSummary } from './order-summary';
import { orderListFilter, type OrderFilterCriteria } from './order-filter';
import { Listeners } from '../shared/listeners';

/** How many times an order create reads its link when the link keeps changing between the read and the write. */
const LINK_READS_PER_CREATE = 3;

/** An order reference as given, trimmed; absent or blank is the documented required-field error. */
function referenceOf(reference: string | null | undefined): string {
  const ref = typeof reference === 'string' ? reference.trim() : '';
  if (!ref) throw requiredField('Reference');
  return ref;
}

export interface CreateOrderInput {
  customer?: { firstname?: string | null; lastname?: string | null; mobile?: string | null; country?: string | null; email?: string | null } | null;
  order?: { amount?: unknown; reference?: string | null; description?: string | null; currency?: string | null } | null;
  payment?: { redirectUrl?: string | null; paymentLinkId?: unknown; frequencyId?: unknown; numberOfPayments?: unknown } | null;
  paymentMeta?: { ipAddress?: string | null } | null;
  /**
   * AUTOMATIC (absent) or MANUAL (docs/capture.md). An order on a payment link takes the link's
   * method instead; one given that differs from the link's is refused.
   */
  captureMethod?: string | null;
}

/** An order with everything its read models need, loaded in a bounded number of queries. */
export interface OrderAggregate {
  order: Order;
  subsidiary: Subsidiary;
  payments: OrderPayment[];
  cards: CardDetail[];
}

/** An order just created (the business event log names it by reference; amounts as exact decimal text). */
export interface OrderCreated {
  environmentId: number;
  reference: string;
  amount: string;
  currency: string;
}

export class OrderService {
  private readonly queries: OrderQueries;
  private readonly linkReads: OrderLinkReads;
  private readonly subsidiaries?: ScopedCache<Subsidiary>;
  /** Order lists and dashboard figures at scale (plain SQL on the list indexes and the summary table). */
  readonly lists: OrderLists;

  constructor(
    orm: MikroORM,
    private readonly fees: FeeService,
    reads: ReadRouting,
    caches?: TenantCaches,
  ) {
    this.queries = new OrderQueries(orm);
    this.linkReads = new OrderLinkReads(orm);
    this.subsidiaries = caches?.create<Subsidiary>();
    this.lists = new OrderLists(orm, reads);
  }

  /**
   * The tenant's merchant record for read models (cached per instance; TenantCaches drops it
   * when the merchant changes). Shared between requests: read it, never change it.
   */
  private async subsidiaryOf(subsidiaryId: number, execute?: ExecuteSql): Promise<Subsidiary> {
    const load = async () => {
      // Inside a transaction, on its connection: a second one from the pool could wait for a connection the transactions hold.
      const subsidiary = execute ? await this.queries.findSubsidiaryBy(execute, subsidiaryId) : await this.queries.findSubsidiary(subsidiaryId);
      if (!subsidiary) throw new Error(`merchant ${subsidiaryId} not found`);
      return { value: subsidiary, subsidiaryId };
    };
    const subsidiary = this.subsidiaries ? await this.subsidiaries.get(subsidiaryId, load) : (await load()).value;
    return subsidiary!;
  }

  /**
   * order/create: validates everything before writing anything; a duplicate reference changes
   * nothing. The order keeps a snapshot of the customer as given; the customer record of the
   * e-mail is created when new and never rewritten (the first details given for it stay).
   * `expiresAt`: the order fails if still unpaid then (orders of the hosted payment-link page).
   */
  async create(tenant: Tenant, input: CreateOrderInput, options: { expiresAt?: Date } = {}): Promise<OrderAggregate> {
    const aggregate = await this.insert(tenant, input, options);
    const { order } = aggregate;
    const created: OrderCreated = { environmentId: tenant.environmentId, reference: order.reference, amount: order.amount, currency: order.currency };
    this.createdListeners.emit(created);
    return aggregate;
  }

  /** Hears each order once it is created (committed); returns the unsubscribe. */
  onCreated(listener: (created: OrderCreated) => void): () => void {
    return this.createdListeners.add(listener);
  }

  private readonly createdListeners = new Listeners<OrderCreated>();

  private async insert(tenant: Tenant, input: CreateOrderInput, options: { expiresAt?: Date }): Promise<OrderAggregate> {
    const text = trimmedText;
    const c = input.customer;
    if (!c) throw requiredField('Customer');
    const o = input.order;
    if (!o) throw requiredField('Order');
    const p = input.payment;
    if (!p) throw requiredField('Payment');

    const firstName = text(c.firstname);
    if (!firstName) throw requiredField('Firstname');
    const lastName = text(c.lastname);
    if (!lastName) throw requiredField('Lastname');
    // The customer is known by email; mobile is optional beside it, as the official SDKs send it ('' when not given).
    const email = text(c.email)?.toLowerCase();
    if (!email) throw requiredField('Email');
    const mobile = text(c.mobile) ?? '';
    if (mobile && !/^\+?[0-9 ()-]{6,20}$/.test(mobile)) throw validationError('The Mobile field is not a valid phone number.');
    if (!isEmail(email)) throw validationError('The Email field is not a valid e-mail address.');
    const country = text(c.country)?.toUpperCase();
    if (!country) throw requiredField('Country');
    requireSupportedCountry(country);
    for (const [field, value] of [
      ['Firstname', firstName],
      ['Lastname', lastName],
    ] as const) {
      if (value.length > 100) throw validationError(`The ${field} field must be at most 100 characters.`);
    }

    const reference = text(o.reference);
    if (!reference) throw requiredField('Reference');
    if (reference.length > 100 || !/^[\x21-\x7e]+$/.test(reference)) {
      throw validationError('The Reference field must be 1 to 100 visible characters without spaces.');
    }
    const currencyCode = (text(o.currency) ?? 'NGN').toUpperCase();
    const currency = currencyOf(currencyCode);
    if (!currency) throw unsupported('Currency');
    if (o.amount === undefined || o.amount === null || o.amount === '') throw requiredField('Amount');
    const amount = parseAmount(o.amount, currency.minorUnits);
    if (typeof amount === 'string') throw amountError(amount);
    const description = text(o.description) ?? '';
    if (description.length > 2000) throw validationError('The Description field must be at most 2000 characters.');

    const redirectUrl = text(p.redirectUrl);
    if (!redirectUrl) throw requiredField('RedirectUrl');
    if (!isHttpUrl(redirectUrl)) throw validationError('The RedirectUrl field must be an http or https URL.');
    const paymentLinkId = optionalId(p.paymentLinkId, 'PaymentLinkId');
    const frequencyId = optionalId(p.frequencyId, 'FrequencyId');
    const numberOfPayments = optionalId(p.numberOfPayments, 'NumberOfPayments', MAX_NUMBER_OF_PAYMENTS);
    if (paymentLinkId === null && (frequencyId !== null || numberOfPayments !== null)) throw subscriptionTermsOnly(frequencyId !== null);
    const givenCaptureMethod = input.captureMethod === undefined || input.captureMethod === null ? null : readCaptureMethod(input.captureMethod);

    let ipAddress: string | null = null;
    if (input.paymentMeta) {
      ipAddress = text(input.paymentMeta.ipAddress);
      if (ipAddress && isIP(ipAddress) === 0) throw validationError('The IpAddress field is not a valid IP address.');
    }

    const quote = await this.fees.compute(tenant, amount, 'C', currency.code);
    // The order's money, as both ways of writing it below store it.
    const priced = {
      amount: amount.toFixed(currency.minorUnits),
      currency: currency.code,
      fee: quote.fee,
      feeRate: quote.feeRate,
      subsidiaryFee: quote.subsidiaryFee,
      customerFee: quote.customerFee,
      totalChargedAmount: quote.totalChargedAmount,
    };

    // An order on a link: the link read and checked by its rules first (kept from an earlier
    // read when it can be; a subscription's frequency is read too). No transaction: nothing is
    // written before the order's own statement, which writes only while the link is as read.
    const onLinkRules: OrderOnLink = { currency, amount, frequencyId, numberOfPayments };
    let onLink = paymentLinkId === null ? null : await this.checkedLink(tenant, paymentLinkId, onLinkRules, givenCaptureMethod, false);

    // Customer, order and timeline entry in one statement (OrderQueries).
    const write = async (): Promise<Order> => {
      for (let reads = 1; ; reads++) {
        const order = await this.queries.insertOrder({
          environmentId: tenant.environmentId,
          email,
          firstName,
          lastName,
          mobile,
          country,
          reference,
          processorReference: randomReference('PGW', 20),
          paymentReference: randomReference('PAY', 20),
          expiresAt: options.expiresAt ?? null,
          ...priced,
          narration: description,
          redirectUrl,
          ipAddress,
          captureMethod: onLink?.link.captureMethod ?? givenCaptureMethod ?? 'AUTOMATIC',
          paymentLink: onLink?.link ?? null,
          paymentLinkVersion: onLink?.version ?? null,
          frequency: onLink?.frequency ?? null,
          numberOfPayments: onLink?.terms?.numberOfPayments ?? null,
        });
        if (order) return order;
        // The link changed since it was read: read and check it again.
        if (reads === LINK_READS_PER_CREATE)
          throw new DomainError('conflict', 'The payment link changed while the order was created; send the request again.', 'VAL400');
        onLink = await this.checkedLink(tenant, paymentLinkId!, onLinkRules, givenCaptureMethod, true);
      }
    };
    try {
      const [order, subsidiary] = await Promise.all([write(), this.subsidiaryOf(tenant.subsidiaryId)]);
      return { order, subsidiary, payments: [], cards: [] };
    } catch (err) {
      if (isUniqueViolation(err, 'checkout_order_environment_reference_unique')) throw validationError('An order with this Reference already exists.');
      throw err;
    }
  }

  /** The tenant's link `id` (kept, unless `fresh`) checked by its rules for an order made on it, with the order's subscription terms and frequency. */
  private async checkedLink(
    tenant: Tenant,
    id: number,
    order: OrderOnLink,
    givenCaptureMethod: CaptureMethod | null,
    fresh: boolean,
  ): Promise<{ link: PaymentLink; version: string; terms: SubscriptionTerms | null; frequency: Frequency | null }> {
    const read = await this.linkReads.linkOf(tenant.environmentId, id, { fresh });
    if (!read) throw linkNotFound();
    const { link, version } = read;
    let terms: SubscriptionTerms | null;
    let frequency: Frequency | null = null;
    try {
      // The link's rules for its orders (active, currency, amount, subscription terms): links/link-usage.ts.
      terms = checkOrderOnLink(link, order);
      // The link decides when its orders' money is taken, however the order is made.
      if (givenCaptureMethod !== null && givenCaptureMethod !== link.captureMethod) {
        throw validationError(`The CaptureMethod field must be ${link.captureMethod}, the capture method of the payment link.`);
      }
      frequency = terms ? await this.linkReads.activeFrequency(terms.frequencyId) : null;
      if (terms && !frequency) throw unsupported('FrequencyId');
    } catch (err) {
      // A refusal is never taken from a kept link: the link may have changed since it was read.
      if (!fresh && err instanceof DomainError) return this.checkedLink(tenant, id, order, givenCaptureMethod, true);
      throw err;
    }
    return { link, version, terms, frequency };
  }

  /** The tenant's order by reference, with payments, cards, link and customer. */
  async getAggregate(tenant: Tenant, reference: string | null | undefined, em?: EntityManager): Promise<OrderAggregate> {
    const ref = referenceOf(reference);
    if (!em) {
      // One prepared statement (OrderQueries) and the cached merchant record.
      const [found, subsidiary] = await Promise.all([this.queries.findAggregate(tenant.environmentId, ref), this.subsidiaryOf(tenant.subsidiaryId)]);
      if (!found) throw orderNotFound();
      return { ...found, subsidiary };
    }
    const order = await em.findOne(Order, { environment: tenant.environmentId, reference: ref }, { populate: ['customer', 'paymentLink', 'paymentLink.type'] });
    if (!order) throw orderNotFound();
    return this.aggregateOf(em, order, tenant.subsidiaryId);
  }

  /** What order/status shows of the tenant's order: its own columns only, in one narrow statement (no merchant, customer, link or payments). */
  async getStatus(tenant: Tenant, reference: string | null | undefined): Promise<OrderStatusRead> {
    const order = await this.queries.findStatus(tenant.environmentId, referenceOf(reference));
    if (!order) throw orderNotFound();
    return order;
  }

  /** The order details (what order/verify answers) of the tenant's order, read in one narrow statement: only what the details show. */
  async getDetails(tenant: Tenant, reference: string | null | undefined): Promise<Pick<OrderAggregate, 'order' | 'payments' | 'cards'>> {
    const found = await this.queries.findDetails(tenant.environmentId, referenceOf(reference));
    if (!found) throw orderNotFound();
    return found;
  }

  /**
   * A keyset page of the tenant's orders, newest first: the page in one query, payments and
   * cards in two more when asked for, `totalCount` (exact up to a bound, then an estimate) when asked for.
   * The filter is checked first (orderListFilter): a bad value is `bad_input`, never SQL.
   */
  async page(
    tenant: Tenant,
    filter: OrderFilterCriteria,
    limit: number,
    after?: { createdAt: Date; id: number },
    want: OrderListWants = { count: true, payments: true },
  ): Promise<{ rows: ListedOrder[] } & Partial<Counted>> {
    // Customers, cards and the merchant's revenue: never to the key a browser holds.
    authorize(tenant, 'read');
    return this.lists.page(tenant, orderListFilter(filter), limit, after, want);
  }

  /**
   * The dashboard's figures over [from, to): counts and sums (exact decimals) by UTC day,
   * currency, payment method and status, from the summary table (docs/performance.md). The
   * merchant's revenue: the private key (or a dashboard session, opened with it) only.
   * The figures are worked out from the summary cells by `dashboardSummaryOf` (order-summary.ts).
   */
  async summary(tenant: Tenant, from: Date, to: Date): Promise<DashboardSummary> {
    if (!(from < to)) throw validationError('from must be before to.');
    authorize(tenant, 'read');
    return dashboardSummaryOf(from, to, await this.lists.summaryCells(tenant, from, to));
  }

  /** The aggregate of rows read by the caller (plain SQL, in its transaction: `execute` reads the merchant on a cache miss). */
  async aggregateOfRows(rows: Pick<OrderAggregate, 'order' | 'payments' | 'cards'>, subsidiaryId: number, execute: ExecuteSql): Promise<OrderAggregate> {
    return { ...rows, subsidiary: await this.subsidiaryOf(subsidiaryId, execute) };
  }

  async aggregateOf(em: EntityManager, order: Order, subsidiaryId: number): Promise<OrderAggregate> {
    await em.populate(order, ['customer', 'paymentLink', 'paymentLink.type']);
    // Read models only (presenters, the outbox body): the payments and cards as plain rows, in the caller's transaction.
    const execute: ExecuteSql = (sql, params) => em.getConnection().execute(sql, params, 'all', em.getTransactionContext());
    const subsidiary = await this.subsidiaryOf(subsidiaryId, execute);
    const { payments, cards } = await this.queries.paymentsOf(execute, order.id);
    return { order, subsidiary, payments, cards };
  }
}

function optionalId(value: unknown, field: string, max = 2_147_483_647): number | null {
  if (value === undefined || value === null || value === '') return null;
  const text = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  if (!/^\d{1,10}$/.test(text) || Number(text) < 1 || Number(text) > max) {
    throw validationError(`The ${field} field must be a whole number from 1 to ${max}.`);
  }
  return Number(text);
}
