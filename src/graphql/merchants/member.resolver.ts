import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphqlContext } from '../context';
import { AcceptInvitationInput, ChangeMemberRoleInput, InvitationType, InviteMemberInput, MemberType } from './member.types';

/** The merchant's team, over the member service: each operation is authorized there by the one check. */
@Resolver()
export class MemberResolver {
  @Authorized('members')
  @Query(() => [MemberType], { description: "The merchant's members, oldest first (OWNER and ADMIN, or the private key)." })
  async members(@Ctx() ctx: GraphqlContext): Promise<MemberType[]> {
    return (await ctx.services.members.members(await ctx.tenant())) as MemberType[];
  }

  @Authorized('members')
  @Mutation(() => InvitationType, { description: 'Invites a person with a role; only an owner (or the private key) invites an owner.' })
  async inviteMember(@Arg('input') input: InviteMemberInput, @Ctx() ctx: GraphqlContext): Promise<InvitationType> {
    return (await ctx.services.members.inviteMember(await ctx.tenant(), input)) as InvitationType;
  }

  @Mutation(() => MemberType, {
    description: 'Needs no key: the token of an invitation makes its holder a member, with the password chosen (12 characters or more).',
  })
  async acceptInvitation(@Arg('input') input: AcceptInvitationInput, @Ctx() ctx: GraphqlContext): Promise<MemberType> {
    return (await ctx.services.members.acceptInvitation(input.token, input.password)) as MemberType;
  }

  @Authorized('members')
  @Mutation(() => MemberType, { description: 'Gives a member another role; only an owner makes or changes an owner, and a merchant keeps one.' })
  async changeMemberRole(@Arg('input') input: ChangeMemberRoleInput, @Ctx() ctx: GraphqlContext): Promise<MemberType> {
    return (await ctx.services.members.changeMemberRole(await ctx.tenant(), input)) as MemberType;
  }

  @Authorized('members')
  @Mutation(() => Boolean, { description: 'Removes a member; only an owner removes an owner, and never the last one.' })
  async removeMember(@Arg('email') email: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    return ctx.services.members.removeMember(await ctx.tenant(), email);
  }
}
