import { Args, Authorized, Ctx, Query, Resolver } from 'type-graphql';
import type { GraphqlContext } from '../context';
import { decodeCursor, PageArgs, pageSize, toPage } from '../connection';
import { AuditEntryConnection, type AuditActorTypeEnum } from './audit.types';
import type { EnvironmentModeEnum } from '../merchants/merchant.types';

@Resolver()
export class AuditResolver {
  @Authorized('secrets')
  @Query(() => AuditEntryConnection, {
    description: "The merchant's audit log, newest first: every change through any interface, every dashboard sign-in and failed sign-in. Private key only.",
  })
  async auditLog(@Args() { first, after }: PageArgs, @Ctx() ctx: GraphqlContext): Promise<AuditEntryConnection> {
    const size = pageSize(first);
    const cursor = after ? decodeCursor(after) : undefined;
    const rows = await ctx.services.audit.log(await ctx.tenant(), size + 1, cursor && { at: cursor.createdAt, id: String(cursor.id) });
    return toPage(
      rows,
      size,
      Boolean(after),
      (e) => ({ createdAt: e.at, id: Number(e.id) }),
      (e) => ({ ...e, actorType: e.actorType as AuditActorTypeEnum, environment: e.environment as EnvironmentModeEnum | null }),
    );
  }
}
