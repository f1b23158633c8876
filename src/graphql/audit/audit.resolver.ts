import { Arg, Args, Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { GraphqlContext } from '../context';
import { decodeCursor, PageArgs, pageSize, toPage } from '../connection';
import { AuditEntryConnection, AuditLogFilterInput, type AuditActorTypeEnum } from './audit.types';
import type { EnvironmentModeEnum } from '../merchants/merchant.types';

@Resolver()
export class AuditResolver {
  @Authorized('secrets')
  @Query(() => AuditEntryConnection, {
    description:
      "The merchant's audit log, newest first: every change through any interface, every dashboard sign-in and failed sign-in, narrowed by the filter. Private key only.",
  })
  async auditLog(
    @Args() { first, after }: PageArgs,
    @Arg('filter', () => AuditLogFilterInput, { nullable: true }) filter: AuditLogFilterInput | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<AuditEntryConnection> {
    const size = pageSize(first);
    const cursor = after ? decodeCursor(after) : undefined;
    const at = cursor && { at: cursor.createdAt, id: String(cursor.id) };
    const rows = await ctx.services.audit.log(await ctx.tenant(), size + 1, at, { ...filter });
    return toPage(
      rows,
      size,
      Boolean(after),
      (e) => ({ createdAt: e.at, id: Number(e.id) }),
      (e) => ({ ...e, actorType: e.actorType as AuditActorTypeEnum, environment: e.environment as EnvironmentModeEnum | null }),
    );
  }
}
