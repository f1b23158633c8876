import { Arg, Args, Authorized, Ctx, Info, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { selectedFieldNames } from '../selection';
import { orderListNode } from './order-list-node';
import type { GraphqlContext } from '../context';
import { decodeCursor, PageArgs, pageSize, toPage } from '../connection';
import type { OrderAggregate } from '../../orders/order.service';
import { InputObject } from '../../shared/input';
import { readPaymentInstrument } from '../../payments/pay-validation';
import type { OrderStatusChange } from '../../events/order-status-bus';
import { DecimalScalar } from '../scalars';
import {
  CaptureOrderInput,
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
  VoidOrderInput,
} from './order.types';
import { toOrderStatusChangeType, toOrderStatusInfoType, toOrderType, toTimelineEntryType } from './order.mapping';

@Resolver()
export class OrderResolver {
  private orderType(ctx: GraphqlContext, a: Pick<OrderAggregate, 'order' | 'payments' | 'cards'>): OrderType {
    return toOrderType(a, ctx.publicUrl);
  }

  @Authorized('read')
  @Query(() => OrderType, { description: 'The order details, fields named as in order/verify. Private key only: it holds customer and card details.' })
  async order(@Arg('reference') reference: string, @Ctx() ctx: GraphqlContext): Promise<OrderType> {
    return this.orderType(ctx, await ctx.services.orders.getAggregate(await ctx.tenant(), reference));
  }

  @Authorized('client')
  @Query(() => OrderStatusInfoType, { description: 'The status of an order, as order/status answers it.' })
  async orderStatus(@Arg('reference') reference: string, @Ctx() ctx: GraphqlContext): Promise<OrderStatusInfoType> {
    const { order } = await ctx.services.orders.getAggregate(await ctx.tenant(), reference);
    return toOrderStatusInfoType(order);
  }

  @Authorized('read')
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

  @Authorized('read')
  @Query(() => [TimelineEntryType], { description: "The order's transaction timeline, oldest first. Private key only: it holds customer and card details." })
  async orderTimeline(@Arg('reference') reference: string, @Ctx() ctx: GraphqlContext): Promise<TimelineEntryType[]> {
    const entries = await ctx.services.timeline.list(await ctx.tenant(), reference);
    return entries.map(toTimelineEntryType);
  }

  @Authorized('client')
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

  @Authorized('read')
  @Query(() => DashboardSummaryType, { description: 'Counts and sums by status and currency over [from, to); private key (or a dashboard session) only.' })
  async dashboardSummary(@Arg('from') from: Date, @Arg('to') to: Date, @Ctx() ctx: GraphqlContext): Promise<DashboardSummaryType> {
    return ctx.services.orders.summary(await ctx.tenant(), from, to);
  }

  @Authorized('client')
  @Mutation(() => OrderType)
  async createOrder(@Arg('input') input: CreateOrderInput, @Ctx() ctx: GraphqlContext): Promise<OrderType> {
    const created = await ctx.services.orders.create(await ctx.tenant(), {
      customer: input.customer,
      order: { amount: input.amount, reference: input.reference, description: input.description, currency: input.currency },
      payment: { redirectUrl: input.redirectUrl, paymentLinkId: input.paymentLinkId, frequencyId: input.frequencyId, numberOfPayments: input.numberOfPayments },
      paymentMeta: input.ipAddress ? { ipAddress: input.ipAddress } : null,
      captureMethod: input.captureMethod ?? null,
    });
    return this.orderType(ctx, created);
  }

  @Authorized('client')
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

  @Authorized('payments.write')
  @Mutation(() => OrderType, {
    description:
      'Takes all (no amount) or part of the money held for an Authorized order, once: the order becomes Successful. Answers the order as `order` does.',
  })
  async captureOrder(@Arg('input') input: CaptureOrderInput, @Ctx() ctx: GraphqlContext): Promise<OrderType> {
    return this.orderType(ctx, await ctx.services.payments.captures.capture(await ctx.tenant(), input));
  }

  @Authorized('payments.write')
  @Mutation(() => OrderType, { description: 'Releases the money held for an Authorized order: the order becomes Voided. Answers the order as `order` does.' })
  async voidOrder(@Arg('input') input: VoidOrderInput, @Ctx() ctx: GraphqlContext): Promise<OrderType> {
    return this.orderType(ctx, await ctx.services.payments.captures.void(await ctx.tenant(), input));
  }

  @Authorized('payments.write')
  @Mutation(() => Boolean, {
    description:
      'Stops a subscription: nothing more is sent to the processor. A renewal already sent when the cancel arrives is not taken back; its order shows how it ends (an approval counts as a payment made, the subscription stays cancelled). Private key only.',
  })
  async cancelRecurringPayment(@Arg('reference') reference: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    const recurring = await ctx.services.recurring.cancel(await ctx.tenant(), reference);
    return recurring.state === 'cancelled';
  }

  @Authorized('client')
  @Mutation(() => TimelineEntryType)
  async trackOrderEvent(@Arg('input') input: TrackOrderEventInput, @Ctx() ctx: GraphqlContext): Promise<TimelineEntryType> {
    const e = await ctx.services.timeline.track(await ctx.tenant(), input);
    return toTimelineEntryType(e);
  }

  @Authorized('client')
  @Subscription(() => OrderStatusChangeType, {
    description: "Each state change of the order (or of every order of the key's merchant environment when reference is omitted).",
    subscribe: async ({ args, context }) => {
      const ctx = context as GraphqlContext;
      const tenant = await ctx.tenant();
      return filterByReference(ctx.services.orderStatusBus.subscribe(tenant.environmentId), (args as { reference?: string | null }).reference ?? null);
    },
  })
  orderStatusChanged(@Root() change: OrderStatusChange, @Arg('reference', () => String, { nullable: true }) _reference: string | null): OrderStatusChangeType {
    return toOrderStatusChangeType(change);
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
