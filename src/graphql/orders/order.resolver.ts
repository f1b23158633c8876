import { Arg, Args, Authorized, Ctx, Info, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { selectedFieldNames } from '../selection';
import { orderListNode } from './order-list-node';
import type { GraphqlContext } from '../context';
import { decodeCursor, PageArgs, pageSize, toPage } from '../connection';
import { toPaymentLinkType } from '../links/payment-link.resolver';
import type { OrderAggregate } from '../../orders/order.service';
import { ORDER_STATUS_NAMES } from '../../orders/order.service';
import { isFinalStatus, OrderStatus } from '../../orders/order.entity';
import type { SummaryCell } from '../../orders/order-lists';
import { shownPaymentMethod } from '../../orders/order-filter';
import { customerDetailsView, orderDetailsView } from '../../orders/order-details.view';
import { Money } from '../../shared/money';
import { validationError } from '../../shared/errors';
import { InputObject } from '../../shared/input';
import { readPaymentInstrument } from '../../payments/pay-validation';
import type { OrderStatusChange } from '../../events/order-status-bus';
import { DecimalScalar } from '../scalars';
import {
  CreateOrderInput,
  DashboardSummaryType,
  FeeQuoteType,
  OrderConnection,
  OrderFilterInput,
  OrderStatusChangeType,
  OrderStatusInfoType,
  OrderType,
  PaymentOptionEnum,
  PayOrderInput,
  PayOrderResultType,
  TimelineEntryType,
  TrackOrderEventInput,
} from './order.types';

const exact = (v: string | null | undefined) => new Money(v ?? 0).toFixed(2);

/** The order's customer as GraphQL shows it (the record's dates as dates). */
export function toCustomerType(order: OrderAggregate['order']): OrderType['customer'] {
  return { ...customerDetailsView(order), dateCreated: order.customer?.dateCreated ?? null, dateUpdated: order.customer?.dateUpdated ?? null };
}

export function toOrderType(a: Pick<OrderAggregate, 'order' | 'payments' | 'cards'>, publicUrl: string, linkUrl: (reference: string) => string): OrderType {
  const view = orderDetailsView(a, publicUrl);
  const { order } = a;
  return {
    ...view,
    amount: exact(order.amount),
    totalAmountCharged: exact(order.totalChargedAmount),
    fee: exact(order.fee),
    feeRate: new Money(order.feeRate ?? 0).toString(),
    subsidiaryFee: exact(order.subsidiaryFee),
    customerFee: exact(order.customerFee),
    dateCreated: order.createdAt,
    dateUpdated: order.updatedAt,
    datePaymentConfirmed: order.datePaymentConfirmed,
    orderPayments: a.payments.map((p, i) => ({ ...view.orderPayments[i]!, dateCreated: p.dateCreated, dateUpdated: p.dateUpdated })),
    cardDetails: a.cards.map((c, i) => ({ ...view.cardDetails[i]!, dateCreated: c.dateCreated })),
    customer: toCustomerType(order),
    paymentLink: order.paymentLink ? toPaymentLinkType(order.paymentLink, linkUrl(order.paymentLink.reference)) : null,
  };
}

const successRate = (successful: number, failed: number) => (successful + failed === 0 ? 0 : successful / (successful + failed));
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The dashboard's figures from the summary cells (exact decimals throughout). */
export function dashboardSummaryOf(from: Date, to: Date, cells: SummaryCell[]): DashboardSummaryType {
  const status = new Map<string, { statusId: number; currency: string; count: number; amount: Money; fees: Money }>();
  const method = new Map<string, { paymentMethod: string; currency: string; count: number; successful: number; failed: number; volume: Money }>();
  const daily = new Map<string, { date: string; currency: string; count: number; successful: number; volume: Money }>();
  for (const c of cells) {
    const s = status.get(`${c.statusId}|${c.currency}`) ?? { statusId: c.statusId, currency: c.currency, count: 0, amount: new Money(0), fees: new Money(0) };
    s.count += c.count;
    s.amount = s.amount.plus(c.amount);
    s.fees = s.fees.plus(c.fees);
    status.set(`${c.statusId}|${c.currency}`, s);
    const shown = shownPaymentMethod(c.paymentMethod);
    const m = method.get(`${shown}|${c.currency}`) ?? { paymentMethod: shown, currency: c.currency, count: 0, successful: 0, failed: 0, volume: new Money(0) };
    const d = daily.get(`${c.day}|${c.currency}`) ?? { date: c.day, currency: c.currency, count: 0, successful: 0, volume: new Money(0) };
    m.count += c.count;
    d.count += c.count;
    if (c.statusId === OrderStatus.Successful) {
      m.successful += c.count;
      m.volume = m.volume.plus(c.amount);
      d.successful += c.count;
      d.volume = d.volume.plus(c.amount);
    } else if (c.statusId === OrderStatus.Failed) {
      m.failed += c.count;
    }
    method.set(`${shown}|${c.currency}`, m);
    daily.set(`${c.day}|${c.currency}`, d);
  }
  const byStatus = [...status.values()].filter((s) => s.count !== 0).sort((a, b) => a.statusId - b.statusId || byText(a.currency, b.currency));
  const count = (statusId: number) => byStatus.filter((r) => r.statusId === statusId).reduce((n, r) => n + r.count, 0);
  return {
    from,
    to,
    byStatus: byStatus.map((r) => ({
      statusId: r.statusId,
      status: ORDER_STATUS_NAMES[r.statusId] ?? 'Unknown',
      currency: r.currency,
      count: r.count,
      amount: r.amount.toFixed(2),
      fees: r.fees.toFixed(2),
    })),
    successRate: successRate(count(OrderStatus.Successful), count(OrderStatus.Failed)),
    byMethod: [...method.values()]
      .filter((m) => m.count !== 0)
      .sort((a, b) => byText(a.paymentMethod, b.paymentMethod) || byText(a.currency, b.currency))
      .map((m) => ({ ...m, successRate: successRate(m.successful, m.failed), volume: m.volume.toFixed(2) })),
    daily: [...daily.values()]
      .filter((d) => d.count !== 0)
      .sort((a, b) => byText(a.date, b.date) || byText(a.currency, b.currency))
      .map((d) => ({ ...d, volume: d.volume.toFixed(2) })),
  };
}

@Resolver()
export class OrderResolver {
  private orderType(ctx: GraphqlContext, a: Pick<OrderAggregate, 'order' | 'payments' | 'cards'>): OrderType {
    const publicUrl = ctx.publicUrl;
    return toOrderType(a, publicUrl, (ref) => `${publicUrl}/pay/${ref}`);
  }

  @Authorized('PRIVATE_KEY')
  @Query(() => OrderType, { description: 'The order details, fields named as in order/verify. Private key only: it holds customer and card details.' })
  async order(@Arg('reference') reference: string, @Ctx() ctx: GraphqlContext): Promise<OrderType> {
    return this.orderType(ctx, await ctx.services.orders.getAggregate(await ctx.tenant(), reference));
  }

  @Authorized('TENANT')
  @Query(() => OrderStatusInfoType, { description: 'The status of an order, as order/status answers it.' })
  async orderStatus(@Arg('reference') reference: string, @Ctx() ctx: GraphqlContext): Promise<OrderStatusInfoType> {
    const { order } = await ctx.services.orders.getAggregate(await ctx.tenant(), reference);
    const final = isFinalStatus(order.statusId);
    return {
      reference: order.reference,
      statusId: order.statusId,
      status: ORDER_STATUS_NAMES[order.statusId] ?? 'Unknown',
      isFinalStatus: final,
      requeryNeeded: !final,
      paymentResponseCode: order.paymentResponseCode ?? '',
      paymentResponseMessage: order.paymentResponseMessage ?? '',
      datePaymentConfirmed: order.datePaymentConfirmed,
    };
  }

  @Authorized('PRIVATE_KEY')
  @Query(() => OrderConnection, { description: "The merchant environment's orders, newest first. Private key only: it holds customer and card details." })
  async orders(
    @Args() { first, after }: PageArgs,
    @Arg('filter', () => OrderFilterInput, { nullable: true }) filter: OrderFilterInput | null,
    @Ctx() ctx: GraphqlContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<OrderConnection> {
    const size = pageSize(first);
    const selected = selectedFieldNames(info);
    const page = await ctx.services.orders.page(
      await ctx.tenant(),
      {
        statusIds: filter?.statusIds ?? undefined,
        createdFrom: filter?.createdFrom ?? undefined,
        createdTo: filter?.createdTo ?? undefined,
        paymentLinkId: filter?.paymentLinkId ?? undefined,
        currency: filter?.currency ?? undefined,
        search: filter?.search ?? undefined,
        paymentMethod: filter?.paymentMethod ?? undefined,
      },
      size + 1,
      after ? decodeCursor(after) : undefined,
      {
        count: selected.has('totalCount') || selected.has('totalCountIsEstimate'),
        payments: selected.has('orderPayments') || selected.has('cardDetails'),
        customer: selected.has('customer'),
        paymentLink: ['paymentLink', 'paymentLinkId', 'paymentLinkReference', 'productName'].some((f) => selected.has(f)),
      },
    );
    return {
      ...toPage(
        page.rows,
        size,
        Boolean(after),
        (a) => ({ createdAt: a.order.createdAt, id: a.order.id }),
        (a) => orderListNode(a, ctx.publicUrl),
      ),
      totalCount: page.totalCount ?? 0,
      totalCountIsEstimate: page.totalCountIsEstimate ?? false,
    };
  }

  @Authorized('PRIVATE_KEY')
  @Query(() => [TimelineEntryType], { description: "The order's transaction timeline, oldest first. Private key only: it holds customer and card details." })
  async orderTimeline(@Arg('reference') reference: string, @Ctx() ctx: GraphqlContext): Promise<TimelineEntryType[]> {
    const entries = await ctx.services.timeline.list(await ctx.tenant(), reference);
    return entries.map((e) => ({
      id: String(e.id),
      event: e.event,
      description: e.description,
      source: e.source,
      metadata: e.metadata,
      createdAt: e.createdAt,
    }));
  }

  @Authorized('TENANT')
  @Query(() => FeeQuoteType)
  async feeQuote(
    @Arg('amount', () => DecimalScalar) amount: string,
    @Arg('paymentOption', () => PaymentOptionEnum) paymentOption: PaymentOptionEnum,
    @Arg('currency', () => String, { nullable: true }) currency: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<FeeQuoteType> {
    const q = await ctx.services.fees.quote(await ctx.tenant(), { amount, paymentOption, currency });
    return { ...q, paymentOption: q.paymentOption as PaymentOptionEnum };
  }

  @Authorized('TENANT')
  @Query(() => DashboardSummaryType, { description: 'Counts and sums by status and currency over [from, to); private key (or a dashboard session) only.' })
  async dashboardSummary(@Arg('from') from: Date, @Arg('to') to: Date, @Ctx() ctx: GraphqlContext): Promise<DashboardSummaryType> {
    if (!(from < to)) throw validationError('from must be before to.');
    return dashboardSummaryOf(from, to, await ctx.services.orders.summary(await ctx.tenant(), from, to));
  }

  @Authorized('TENANT')
  @Mutation(() => OrderType)
  async createOrder(@Arg('input') input: CreateOrderInput, @Ctx() ctx: GraphqlContext): Promise<OrderType> {
    const created = await ctx.services.orders.create(await ctx.tenant(), {
      customer: input.customer,
      order: { amount: input.amount, reference: input.reference, description: input.description, currency: input.currency },
      payment: { redirectUrl: input.redirectUrl, paymentLinkId: input.paymentLinkId, frequencyId: input.frequencyId, numberOfPayments: input.numberOfPayments },
      paymentMeta: input.ipAddress ? { ipAddress: input.ipAddress } : null,
    });
    return this.orderType(ctx, created);
  }

  @Authorized('TENANT')
  @Mutation(() => PayOrderResultType, { description: 'The card part only as an encrypted payload, never as plain fields.' })
  async payOrder(@Arg('input') input: PayOrderInput, @Ctx() ctx: GraphqlContext): Promise<PayOrderResultType> {
    const tenant = await ctx.tenant();
    const secret = InputObject.from(await ctx.services.payloads.decrypt(tenant, input.encryptedPayload)).allowOnly(['card', 'paypal']);
    const result = await ctx.services.payments.pay(tenant, {
      reference: input.reference,
      paymentOption: input.paymentOption,
      country: input.country,
      ...readPaymentInstrument(secret),
    });
    return { redirectUrl: result.redirectUrl, final: result.final, order: this.orderType(ctx, result.aggregate) };
  }

  @Authorized('PRIVATE_KEY')
  @Mutation(() => Boolean, { description: 'Stops a subscription: nothing more is charged. Private key only.' })
  async cancelRecurringPayment(@Arg('reference') reference: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    const recurring = await ctx.services.recurring.cancel(await ctx.tenant(), reference);
    return recurring.state === 'cancelled';
  }

  @Authorized('TENANT')
  @Mutation(() => TimelineEntryType)
  async trackOrderEvent(@Arg('input') input: TrackOrderEventInput, @Ctx() ctx: GraphqlContext): Promise<TimelineEntryType> {
    const e = await ctx.services.timeline.track(await ctx.tenant(), input);
    return { id: String(e.id), event: e.event, description: e.description, source: e.source, metadata: e.metadata, createdAt: e.createdAt };
  }

  @Authorized('TENANT')
  @Subscription(() => OrderStatusChangeType, {
    description: "Each state change of the order (or of every order of the key's merchant environment when reference is omitted).",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphqlContext;
      const tenant = await ctx.tenant();
      return filterByReference(ctx.services.orderStatusBus.subscribe(tenant.environmentId), (args as { reference?: string | null }).reference ?? null);
    },
  })
  orderStatusChanged(@Root() change: OrderStatusChange, @Arg('reference', () => String, { nullable: true }) _reference: string | null): OrderStatusChangeType {
    return { reference: change.reference, statusId: change.statusId, status: change.status, sequence: change.sequence, eventId: change.eventId };
  }
}

/**
 * The changes of one order. Not an async generator: a generator waiting for the next change
 * cannot be returned until one arrives, so an unsubscribe (or a closed socket) would keep the
 * bus subscription, and graphql-ws waiting for it. Here `return()` reaches the source at once.
 */
function filterByReference(source: AsyncIterableIterator<OrderStatusChange>, reference: string | null): AsyncIterableIterator<OrderStatusChange> {
  if (reference === null) return source;
  return {
    async next() {
      for (;;) {
        const result = await source.next();
        if (result.done || result.value.reference === reference) return result;
      }
    },
    return: () => source.return?.() ?? Promise.resolve({ value: undefined, done: true }),
    throw: (error?: unknown) => source.throw?.(error) ?? Promise.reject(error),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}
