import { Arg, Authorized, Ctx, Mutation, Resolver } from 'type-graphql';
import type { GraphqlContext } from '../context';
import { tooManyRequestsError } from '../../protection';
import { MemberType } from './member.types';
import { PasswordResetLinkType, ResetPasswordInput } from './password-reset.types';

/** Members' password resets, over the password-reset service (which decides everything). */
@Resolver()
export class PasswordResetResolver {
  @Mutation(() => Boolean, {
    description:
      'Needs no key. Emails a password-reset link (valid 1 hour, once) to the member with this email, when email is configured; ' +
      'the answer is always true, whether or not the email is a member. Rate-limited per client IP and per email (RATE_LIMITED).',
  })
  async requestPasswordReset(@Arg('email') email: string, @Ctx() ctx: GraphqlContext): Promise<boolean> {
    const retryAfterSeconds = await ctx.countPasswordResetRequest(email);
    if (retryAfterSeconds !== undefined) throw tooManyRequestsError(retryAfterSeconds);
    return ctx.services.passwordResets.requestPasswordReset(email, { ip: ctx.ip });
  }

  @Authorized('members')
  @Mutation(() => PasswordResetLinkType, {
    description: 'A password-reset link for a member, to hand over without email (OWNER and ADMIN, or the private key; only an owner makes one for an owner).',
  })
  async createPasswordResetLink(@Arg('email') email: string, @Ctx() ctx: GraphqlContext): Promise<PasswordResetLinkType> {
    return ctx.services.passwordResets.createPasswordResetLink(await ctx.tenant(), email);
  }

  @Mutation(() => MemberType, {
    description: "Needs no key: a reset link's token sets the member's password (12 characters or more), is used up, and ends the member's sessions.",
  })
  async resetPassword(@Arg('input') input: ResetPasswordInput, @Ctx() ctx: GraphqlContext): Promise<MemberType> {
    return (await ctx.services.passwordResets.resetPassword(input.token, input.password, { ip: ctx.ip })) as MemberType;
  }
}
