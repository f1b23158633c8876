import { Field, InputType, ObjectType, registerEnumType } from 'type-graphql';

export enum MemberRoleEnum {
  OWNER = 'OWNER',
  ADMIN = 'ADMIN',
  DEVELOPER = 'DEVELOPER',
  SUPPORT = 'SUPPORT',
  VIEWER = 'VIEWER',
}
registerEnumType(MemberRoleEnum, { name: 'MemberRole', description: "A member's role: what they may do for the merchant." });

@ObjectType('Member', { description: "A person of the merchant's team." })
export class MemberType {
  @Field() email!: string;
  @Field(() => MemberRoleEnum) role!: MemberRoleEnum;
  @Field() createdAt!: Date;
  @Field({
    description:
      'Works in the test environment only: invited with the test private key (or by a member who works in test only). Only the live private key, or a member who works in live, invites someone who works in live too.',
  })
  testOnly!: boolean;
}

@ObjectType('Invitation', { description: 'An invitation to the team: its URL is shown once, valid 72 hours, used once.' })
export class InvitationType {
  @Field() email!: string;
  @Field(() => MemberRoleEnum) role!: MemberRoleEnum;
  @Field({ description: 'Where the invited person sets their password; the token is its last path segment.' }) invitationUrl!: string;
  @Field() expiresAt!: Date;
}

@InputType()
export class InviteMemberInput {
  @Field() email!: string;
  @Field(() => MemberRoleEnum) role!: MemberRoleEnum;
}

@InputType()
export class AcceptInvitationInput {
  @Field({ description: 'The last path segment of the invitationUrl.' }) token!: string;
  @Field({ description: 'At least 12 characters.' }) password!: string;
}

@InputType()
export class ChangeMemberRoleInput {
  @Field() email!: string;
  @Field(() => MemberRoleEnum) role!: MemberRoleEnum;
  @Field(() => Boolean, {
    nullable: true,
    description:
      'true: the member works in the test environment only; false: in test and live (only the live private key, or a member who works in live, gives that). Left out: unchanged.',
  })
  testOnly?: boolean | null;
}
