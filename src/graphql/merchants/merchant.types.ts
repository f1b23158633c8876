import { Field, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { GraphQLJSON } from 'graphql-scalars';

export enum EnvironmentModeEnum {
  TEST = 'test',
  LIVE = 'live',
}
registerEnumType(EnvironmentModeEnum, { name: 'EnvironmentMode', description: 'The environment an api-key belongs to.' });

export enum RotatableKeyEnum {
  PUBLIC = 'public',
  PRIVATE = 'private',
  ENCRYPTION = 'encryption',
}
registerEnumType(RotatableKeyEnum, { name: 'RotatableKey' });

export enum FeeBearerEnum {
  MERCHANT = 'merchant',
  CUSTOMER = 'customer',
}
registerEnumType(FeeBearerEnum, { name: 'FeeBearer', description: 'Who pays the processing fee.' });

@ObjectType('Subsidiary', { description: 'A merchant, as the legacy interface names it.' })
export class SubsidiaryType {
  @Field(() => Int) id!: number;
  @Field() name!: string;
  @Field({ description: 'ISO 3166-1 alpha-2' }) country!: string;
  @Field() supportEmail!: string;
  @Field(() => GraphQLJSON, { nullable: true }) customization?: unknown;
}

@ObjectType('Merchant', { description: "The api-key's own merchant and environment." })
export class MerchantType {
  @Field(() => SubsidiaryType) subsidiary!: SubsidiaryType;
  @Field(() => EnvironmentModeEnum) environment!: EnvironmentModeEnum;
  @Field({ description: 'The encryption key to encrypt payloads with now.' }) encryptionKey!: string;
  @Field(() => FeeBearerEnum) feeBearer!: FeeBearerEnum;
}

@ObjectType('EnvironmentKeys')
export class EnvironmentKeysType {
  @Field() publicKey!: string;
  @Field() privateKey!: string;
  @Field() encryptionKey!: string;
}

@ObjectType('MerchantKeys')
export class MerchantKeysType {
  @Field(() => EnvironmentKeysType) test!: EnvironmentKeysType;
  @Field(() => EnvironmentKeysType) live!: EnvironmentKeysType;
}

@ObjectType('FirstOwner')
export class FirstOwnerType {
  @Field() email!: string;
  @Field({ description: 'Where the owner sets their password (valid 72 hours, once).' }) invitationUrl!: string;
}

@ObjectType('CreatedMerchant', { description: 'Private keys and the webhook secret are shown here once and never again.' })
export class CreatedMerchantType {
  @Field(() => SubsidiaryType) subsidiary!: SubsidiaryType;
  @Field({ description: "Signs the test environment's webhooks." }) webhookSecret!: string;
  @Field({ description: "Signs the live environment's webhooks." }) liveWebhookSecret!: string;
  @Field(() => MerchantKeysType) keys!: MerchantKeysType;
  @Field(() => FirstOwnerType, { nullable: true, description: 'The first owner invitation, when ownerEmail was given.' })
  owner?: FirstOwnerType | null;
}

@InputType()
export class CreateMerchantInput {
  @Field() name!: string;
  @Field({ description: 'ISO 3166-1 alpha-2' }) country!: string;
  @Field() supportEmail!: string;
  @Field(() => String, { nullable: true, description: "The test environment's webhook URL." }) webhookUrl?: string | null;
  @Field(() => String, { nullable: true, description: "The live environment's webhook URL." }) liveWebhookUrl?: string | null;
  @Field(() => FeeBearerEnum, { nullable: true, description: 'Who bears the processing fee in both environments (default CUSTOMER).' })
  feeBearer?: FeeBearerEnum | null;
  @Field(() => Int, { nullable: true, description: 'RSA size of the encryption keys: 2048, 3072 or 4096 (default: ENCRYPTION_KEY_BITS, 4096 unless set).' })
  keyBits?: number | null;
  @Field(() => String, { nullable: true, description: "Invites this email as the merchant's first member, an OWNER." })
  ownerEmail?: string | null;
}

@InputType()
export class RotateKeysInput {
  @Field(() => [RotatableKeyEnum]) keys!: RotatableKeyEnum[];
  @Field(() => Int, { nullable: true, description: 'Seconds the replaced keys keep working (0 to 604800, default 0).' })
  graceSeconds?: number | null;
}

@ObjectType('RotatedKeys')
export class RotatedKeysType {
  @Field(() => String, { nullable: true }) publicKey!: string | null;
  @Field(() => String, { nullable: true }) privateKey!: string | null;
  @Field(() => String, { nullable: true }) encryptionKey!: string | null;
  @Field() previousKeysExpireAt!: Date;
}

@InputType()
export class MerchantSettingsInput {
  @Field(() => FeeBearerEnum, { nullable: true }) feeBearer?: FeeBearerEnum | null;
}

@ObjectType('MerchantSettings', { description: "Settings of the api-key's environment." })
export class MerchantSettingsType {
  @Field(() => FeeBearerEnum) feeBearer!: FeeBearerEnum;
}

@ObjectType('ApiKeyInfo', { description: 'An api-key as a dashboard shows it: a hint, never the key.' })
export class ApiKeyInfoType {
  @Field({ description: 'public or private' }) kind!: string;
  @Field({ description: 'The prefix and last four characters.' }) hint!: string;
  @Field() createdAt!: Date;
  @Field(() => Date, { nullable: true, description: 'When a replaced key stops working; null while it is current.' }) expiresAt!: Date | null;
}
