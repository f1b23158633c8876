import { Field, InputType, Int, ObjectType } from 'type-graphql';
import { MemberRoleEnum } from './member.types';

@ObjectType('Account', { description: 'The signed-in member’s own account.' })
export class AccountType {
  @Field() email!: string;
  @Field(() => MemberRoleEnum) role!: MemberRoleEnum;
  @Field({ description: 'Whether sign-in asks for an authentication code (TOTP) after the password.' }) totpEnabled!: boolean;
  @Field(() => Int, { description: 'Recovery codes not yet used (0 while two-step sign-in is off).' }) recoveryCodesLeft!: number;
}

@ObjectType('TotpEnrolment', { description: 'A new TOTP secret for an authenticator app, shown once; confirm it with a code to turn two-step sign-in on.' })
export class TotpEnrolmentType {
  @Field({ description: 'The secret in Base32, to type into an app that cannot scan.' }) secret!: string;
  @Field({ description: 'The otpauth:// URI of the secret (issuer: the product name, label: the member’s email).' }) otpauthUri!: string;
  @Field({ description: 'The URI as a QR code: a PNG data: URL.' }) qrCodeDataUrl!: string;
}

@ObjectType('TotpEnabled', { description: 'Two-step sign-in is on.' })
export class TotpEnabledType {
  @Field(() => [String], { description: 'Ten recovery codes, each usable once instead of a code: shown this once, stored only as hashes.' })
  recoveryCodes!: string[];
}

@InputType()
export class ConfirmTotpEnrolmentInput {
  @Field({ description: 'The current six-digit code of the authenticator app.' }) code!: string;
}

@InputType({ description: 'One of the two proves the member is at the keyboard.' })
export class DisableTotpInput {
  @Field({ nullable: true, description: 'A current code of the authenticator app, or an unused recovery code.' }) code?: string;
  @Field({ nullable: true, description: 'The member’s password.' }) password?: string;
}
