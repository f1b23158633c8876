import { Arg, Args, Authorized, Ctx, FieldResolver, Info, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { GraphQLResolveInfo } from 'graphql';
import { selectedFieldNames } from '../selection';
import type { GraphqlContext } from '../context';
import type { PaymentLink } from '../../links/payment-link.entity';
import { decodeCursor, PageArgs, pageSize, toPage } from '../connection';
import {
  CreatePaymentLinkInput,
  EditPaymentLinkInput,
  FrequencyType,
  PaymentLinkConnection,
  PaymentLinkFilterInput,
  PaymentLinkStatusEnum,
  PaymentLinkType,
  PaymentLinkTypeInfo,
} from './payment-link.types';
import { validationError } from '../../shared/errors';
import type { PaymentLinkStatus } from '../../links/link-status';
import type { PaymentLinkService } from '../../links/payment-link.service';
import { toPaymentLinkType } from './payment-link.mapping';

/** One link as the schema shows it, with its status (one query). */
async function linkView(links: PaymentLinkService, link: PaymentLink): Promise<PaymentLinkType> {
  return toPaymentLinkType(link, links.paymentLinkUrl(link), await links.status(link));
}

const countAsked = (info: GraphQLResolveInfo) => {
  const selected = selectedFieldNames(info);
  return selected.has('totalCount') || selected.has('totalCountIsEstimate');
};

@Resolver(() => PaymentLinkType)
export class PaymentLinkResolver {
  @FieldResolver(() => PaymentLinkStatusEnum, {
    description: 'Whether customers can pay the link now, from the link and its paid orders: what its page shows a customer.',
  })
  async status(@Root() link: PaymentLinkType, @Ctx() ctx: GraphqlContext): Promise<PaymentLinkStatusEnum> {
    if (link.status) return link.status;
    const shape = { id: link.id, isActive: link.isActive, limit: link.limit, type: { code: link.paymentLinkCode } };
    return (await ctx.services.links.statuses([shape])).get(link.id) as PaymentLinkStatusEnum;
  }

  @Authorized('client')
  @Query(() => PaymentLinkConnection, { description: "The merchant environment's links, newest first." })
  async paymentLinks(
    @Args() { first, after }: PageArgs,
    @Arg('filter', () => PaymentLinkFilterInput, { nullable: true }) filter: PaymentLinkFilterInput | null,
    @Ctx() ctx: GraphqlContext,
    @Info() info: GraphQLResolveInfo,
  ): Promise<PaymentLinkConnection> {
    const tenant = await ctx.tenant();
    const size = pageSize(first);
    const page = await ctx.services.links.page(
      tenant,
      {
        isActive: filter?.isActive ?? undefined,
        currency: filter?.currency ?? undefined,
        search: filter?.search ?? undefined,
        createdFrom: filter?.createdFrom ?? undefined,
        createdTo: filter?.createdTo ?? undefined,
      },
      size + 1,
      after ? decodeCursor(after) : undefined,
      { count: countAsked(info) },
    );
    const links = ctx.services.links;
    const statuses = selectedFieldNames(info).has('status') ? await links.statuses(page.rows) : new Map<number, PaymentLinkStatus>();
    return {
      ...toPage(
        page.rows,
        size,
        Boolean(after),
        (l) => ({ createdAt: l.dateCreated, id: l.id }),
        (l) => toPaymentLinkType(l, links.paymentLinkUrl(l), statuses.get(l.id)),
      ),
      totalCount: page.totalCount ?? 0,
      totalCountIsEstimate: page.totalCountIsEstimate ?? false,
    };
  }

  @Authorized('client')
  @Query(() => PaymentLinkType, { description: 'One link, by id or by reference.' })
  async paymentLink(
    @Arg('id', () => Int, { nullable: true }) id: number | null,
    @Arg('reference', () => String, { nullable: true }) reference: string | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<PaymentLinkType> {
    const tenant = await ctx.tenant();
    if ((id === null || id === undefined) === (reference === null || reference === undefined)) throw validationError('Give either id or reference.');
    const link = id !== null && id !== undefined ? await ctx.services.links.get(tenant, id) : await ctx.services.links.getByReference(tenant, reference!);
    return linkView(ctx.services.links, link);
  }

  @Authorized('links.write')
  @Mutation(() => PaymentLinkType, { description: 'Creates a link; private key only.' })
  async createPaymentLink(@Arg('input') input: CreatePaymentLinkInput, @Ctx() ctx: GraphqlContext): Promise<PaymentLinkType> {
    const { link } = await ctx.services.links.create(await ctx.tenant(), input);
    return linkView(ctx.services.links, link);
  }

  @Authorized('links.write')
  @Mutation(() => PaymentLinkType, { description: "Changes a link's fields; private key only." })
  async editPaymentLink(@Arg('id', () => Int) id: number, @Arg('input') input: EditPaymentLinkInput, @Ctx() ctx: GraphqlContext): Promise<PaymentLinkType> {
    const { link } = await ctx.services.links.edit(await ctx.tenant(), id, input);
    return linkView(ctx.services.links, link);
  }

  @Authorized('links.write')
  @Mutation(() => PaymentLinkType, { description: 'Activates a link; private key only.' })
  async activatePaymentLink(@Arg('id', () => Int) id: number, @Ctx() ctx: GraphqlContext): Promise<PaymentLinkType> {
    const link = await ctx.services.links.setActive(await ctx.tenant(), id, true);
    return linkView(ctx.services.links, link);
  }

  @Authorized('links.write')
  @Mutation(() => PaymentLinkType, { description: 'Deactivates a link; private key only.' })
  async deactivatePaymentLink(@Arg('id', () => Int) id: number, @Ctx() ctx: GraphqlContext): Promise<PaymentLinkType> {
    const link = await ctx.services.links.setActive(await ctx.tenant(), id, false);
    return linkView(ctx.services.links, link);
  }

  @Authorized('client')
  @Query(() => [PaymentLinkTypeInfo])
  async paymentLinkTypes(@Ctx() ctx: GraphqlContext): Promise<PaymentLinkTypeInfo[]> {
    return ctx.services.links.types();
  }

  @Authorized('client')
  @Query(() => [FrequencyType])
  async frequencies(@Ctx() ctx: GraphqlContext): Promise<FrequencyType[]> {
    return ctx.services.links.frequencies();
  }
}
