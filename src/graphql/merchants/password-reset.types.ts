import { Field, InputType, ObjectType } from 'type-graphql';

@ObjectType('PasswordResetLink', { description: 'A link where a member chooses a new password: shown once, valid 1 hour, used once.' })
export class PasswordResetLinkType {
  @Field() email!: string;
  @Field({ description: 'Where the member chooses a new password; the token is its last path segment.' }) resetUrl!: string;
  @Field() expiresAt!: Date;
}

@InputType()
export class ResetPasswordInput {
  @Field({ description: 'The last path segment of the reset link.' }) token!: string;
  @Field({ description: 'The new password: at least 12 characters.' }) password!: string;
}
