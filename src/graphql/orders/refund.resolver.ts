import { Arg, Authorized, Ctx, FieldResolver, Mutation, Resolver, Root } from 'type-graphql';
import type { GraphqlContext } from '../context';
import { DecimalScalar } from '../scalars';
import type { OrderRefunds } from '../../payments/refund.service';
import type { RefundView } from '../../payments/refund-view';
import { DashboardSummaryType, OrderType, type OrderRoot } from './order.types';
import { RefundedVolumeType, RefundOrderInput, RefundStatusEnum, RefundType } from './refund.types';

const toRefundType = (view: RefundView): RefundType => ({ ...view, status: view.status as RefundStatusEnum });

/** Each request reads an order's refunds once, whichever of its refund fields are asked for. */
const readPerRequest = new WeakMap<GraphqlContext, Map<string, Promise<OrderRefunds>>>();

async function refundsOf(ctx: GraphqlContext, reference: string): Promise<OrderRefunds> {
  let read = readPerRequest.get(ctx);
  if (!read) readPerRequest.set(ctx, (read = new Map()));
  let found = read.get(reference);
  if (!found) {
    found = ctx.tenant().then((tenant) => ctx.services.refunds.forOrder(tenant, reference));
    read.set(reference, found);
  }
  return found;
}

@Resolver(() => OrderType)
export class RefundResolver {
  @Authorized('payments.write')
  @Mutation(() => RefundType, {
    description:
      'Refunds a Successful order in full (no amount) or in part, within its balance. Answers PENDING or the settled refund. Private key or a member allowed to refund; test environment only for now.',
  })
  async refundOrder(@Arg('input') input: RefundOrderInput, @Ctx() ctx: GraphqlContext): Promise<RefundType> {
    return toRefundType(await ctx.services.refunds.refundOrder(await ctx.tenant(), input));
  }

  @Authorized('read')
  @FieldResolver(() => DecimalScalar, { description: 'The sum of the SUCCEEDED refunds. Needs the private key.' })
  async amountRefunded(@Root() order: OrderRoot, @Ctx() ctx: GraphqlContext): Promise<string> {
    return (await refundsOf(ctx, order.orderReference)).amountRefunded;
  }

  @Authorized('read')
  @FieldResolver(() => DecimalScalar, {
    description:
      'The most a refund asked now may take: the balance (totalAmountCharged less every refund not FAILED) while the order may be refunded, else 0. Needs the private key.',
  })
  async amountRefundable(@Root() order: OrderRoot, @Ctx() ctx: GraphqlContext): Promise<string> {
    return (await refundsOf(ctx, order.orderReference)).amountRefundable;
  }

  @Authorized('read')
  @FieldResolver(() => [RefundType], { description: "The order's refunds, oldest first. Needs the private key." })
  async refunds(@Root() order: OrderRoot, @Ctx() ctx: GraphqlContext): Promise<RefundType[]> {
    return (await refundsOf(ctx, order.orderReference)).refunds.map(toRefundType);
  }
}

@Resolver(() => DashboardSummaryType)
export class RefundSummaryResolver {
  @Authorized('read')
  @FieldResolver(() => [RefundedVolumeType], { description: 'SUCCEEDED refunds asked for in [from, to), one per currency.' })
  async refunded(@Root() summary: DashboardSummaryType, @Ctx() ctx: GraphqlContext): Promise<RefundedVolumeType[]> {
    return ctx.services.refunds.refundedVolume(await ctx.tenant(), summary.from, summary.to);
  }
}
