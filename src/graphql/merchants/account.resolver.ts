import { Arg, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphqlContext } from '../context';
import { AccountType, ConfirmTotpEnrolmentInput, DisableTotpInput, TotpEnabledType, TotpEnrolmentType } from './account.types';

/**
 * The signed-in member's own account (a dashboard session of a member; an api-key is refused
 * with FORBIDDEN by the service): two-step sign-in with an authenticator app.
 */
@Resolver()
export class AccountResolver {
  @Query(() => AccountType, { description: 'The signed-in member’s own account (member sessions only).' })
  async myAccount(@Ctx() ctx: GraphqlContext): Promise<AccountType> {
    return (await ctx.services.memberTotp.account(await ctx.tenant())) as AccountType;
  }

  @Mutation(() => TotpEnrolmentType, {
    description: 'Starts turning two-step sign-in on: a new secret for an authenticator app, waiting for confirmTotpEnrolment.',
  })
  async startTotpEnrolment(@Ctx() ctx: GraphqlContext): Promise<TotpEnrolmentType> {
    return ctx.services.memberTotp.startEnrolment(await ctx.tenant());
  }

  @Mutation(() => TotpEnabledType, { description: 'Turns two-step sign-in on with a current code of the new secret; answers the recovery codes, once.' })
  async confirmTotpEnrolment(@Arg('input') input: ConfirmTotpEnrolmentInput, @Ctx() ctx: GraphqlContext): Promise<TotpEnabledType> {
    return { recoveryCodes: await ctx.services.memberTotp.confirmEnrolment(await ctx.tenant(), input.code) };
  }

  @Mutation(() => Boolean, { description: 'Turns two-step sign-in off, given a current code (or a recovery code) or the password.' })
  async disableTotp(@Arg('input') input: DisableTotpInput, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    return ctx.services.memberTotp.disable(await ctx.tenant(), input);
  }
}
