import { Arg, Args, Authorized, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { GraphqlContext } from '../context';
import { PageArgs, pageSize } from '../connection';
import { validationError } from '../../shared/errors';
import type { DisputeCursor } from '../../payments/dispute.service';
import type { DisputeView } from '../../payments/dispute-view';
import { DashboardSummaryType, OrderType, type OrderRoot } from './order.types';
import { DisputeConnection, DisputedVolumeType, DisputeStatusEnum, DisputeType, SubmitDisputeEvidenceInput } from './dispute.types';

const toDisputeType = (view: DisputeView): DisputeType => ({ ...view, status: view.status as DisputeStatusEnum });

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Keyset cursors over (createdAt desc, id desc) of disputes, whose ids are UUIDs. */
function encodeCursor(view: DisputeView): string {
  return Buffer.from(JSON.stringify([view.createdAt.toISOString(), view.id])).toString('base64url');
}

function decodeCursor(value: string): DisputeCursor {
  try {
    const [iso, id] = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as [string, string];
    const createdAt = new Date(iso);
    if (Number.isNaN(createdAt.getTime()) || createdAt.getUTCFullYear() < 1 || createdAt.getUTCFullYear() > 9999) throw new Error('bad');
    if (typeof id !== 'string' || !UUID.test(id)) throw new Error('bad');
    return { createdAt, id };
  } catch {
    throw validationError('The after cursor is not valid.');
  }
}

@Resolver(() => OrderType)
export class DisputeResolver {
  @Authorized('read')
  @Query(() => DisputeConnection, {
    description: "The environment's disputes, newest first, of one status or all. Private key or a member who may read orders.",
  })
  async disputes(
    @Args() { first, after }: PageArgs,
    @Arg('status', () => DisputeStatusEnum, { nullable: true }) status: DisputeStatusEnum | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<DisputeConnection> {
    const size = pageSize(first);
    const rows = await ctx.services.disputes.page(await ctx.tenant(), status ?? null, size + 1, after ? decodeCursor(after) : undefined);
    const edges = rows.slice(0, size).map((view) => ({ cursor: encodeCursor(view), node: toDisputeType(view) }));
    return {
      edges,
      pageInfo: {
        hasNextPage: rows.length > size,
        hasPreviousPage: Boolean(after),
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges[edges.length - 1]?.cursor ?? null,
      },
    };
  }

  @Authorized('payments.write')
  @Mutation(() => DisputeType, {
    description:
      'Answers a dispute that needs a response with evidence: UNDER_REVIEW until the processor decides (WON or LOST). DISPUTE_NOT_OPEN once answered or past its deadline. Test environment only for now.',
  })
  async submitDisputeEvidence(@Arg('input') input: SubmitDisputeEvidenceInput, @Ctx() ctx: GraphqlContext): Promise<DisputeType> {
    return toDisputeType(await ctx.services.disputes.submitEvidence(await ctx.tenant(), input));
  }

  @Authorized('payments.write')
  @Mutation(() => DisputeType, {
    description:
      "Gives up a dispute that needs a response: ACCEPTED, its amount taken off the order's balance. DISPUTE_NOT_OPEN once answered or past its deadline. Test environment only for now.",
  })
  async acceptDispute(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphqlContext): Promise<DisputeType> {
    return toDisputeType(await ctx.services.disputes.accept(await ctx.tenant(), id));
  }

  @Authorized('read')
  @FieldResolver(() => [DisputeType], { name: 'disputes', description: "The order's disputes, oldest first. Needs the private key." })
  async orderDisputes(@Root() order: OrderRoot, @Ctx() ctx: GraphqlContext): Promise<DisputeType[]> {
    return (await ctx.services.disputes.forOrder(await ctx.tenant(), order.orderReference)).map(toDisputeType);
  }
}

@Resolver(() => DashboardSummaryType)
export class DisputeSummaryResolver {
  @Authorized('read')
  @FieldResolver(() => [DisputedVolumeType], { description: 'Disputes opened in [from, to), one per currency: the amounts disputed and lost.' })
  async disputed(@Root() summary: DashboardSummaryType, @Ctx() ctx: GraphqlContext): Promise<DisputedVolumeType[]> {
    return ctx.services.disputes.disputedVolume(await ctx.tenant(), summary.from, summary.to);
  }
}
