import { Arg, Authorized, Ctx, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphqlContext } from '../context';
import { ADMIN_ACTOR } from '../../merchants/audit/audit.service';
import {
  ApiKeyInfoType,
  CreatedMerchantType,
  CreateMerchantInput,
  EnvironmentModeEnum,
  FeeBearerEnum,
  MerchantSettingsInput,
  MerchantSettingsType,
  MerchantType,
  RotatedKeysType,
  RotateKeysInput,
} from './merchant.types';

@Resolver()
export class MerchantResolver {
  @Authorized('client')
  @Query(() => MerchantType, { description: "The api-key's merchant and environment." })
  async merchant(@Ctx() ctx: GraphqlContext): Promise<MerchantType> {
    const tenant = await ctx.tenant();
    const subsidiary = await ctx.services.merchants.getSubsidiary(tenant);
    return {
      subsidiary,
      environment: tenant.mode as EnvironmentModeEnum,
      encryptionKey: await ctx.services.merchants.currentEncryptionKey(tenant),
      feeBearer: (await ctx.services.merchants.feeBearer(tenant)) as FeeBearerEnum,
    };
  }

  @Authorized('developers')
  @Query(() => [ApiKeyInfoType], { description: "The environment's working api-keys (hints only), newest first; private key only." })
  async apiKeys(@Ctx() ctx: GraphqlContext): Promise<ApiKeyInfoType[]> {
    return ctx.services.merchants.listApiKeys(await ctx.tenant());
  }

  @Authorized('secrets')
  @Mutation(() => MerchantSettingsType, { description: "Settings of the key's environment; private key only." })
  async updateMerchantSettings(@Arg('input') input: MerchantSettingsInput, @Ctx() ctx: GraphqlContext): Promise<MerchantSettingsType> {
    const tenant = await ctx.tenant();
    if (input.feeBearer) await ctx.services.merchants.setFeeBearer(tenant, input.feeBearer);
    return { feeBearer: (await ctx.services.merchants.feeBearer(tenant)) as FeeBearerEnum };
  }

  @Authorized('ADMIN')
  @Mutation(() => CreatedMerchantType, { description: 'Platform admin only (x-admin-token).' })
  createMerchant(@Arg('input') input: CreateMerchantInput, @Ctx() ctx: GraphqlContext): Promise<CreatedMerchantType> {
    return ctx.services.merchants.createMerchant(input, { actor: ADMIN_ACTOR, ip: ctx.ip ?? null });
  }

  @Authorized('developers')
  @Mutation(() => RotatedKeysType, {
    description:
      "Replaces the environment's keys; private key only. The new keys are shown only in this answer: the service stores nothing but a hash of " +
      'each new public and private key, so no query can show them again. Copy them now and store them somewhere safe; a lost key can only be ' +
      'replaced by another rotation. (The encryption key is the exception: `merchant { encryptionKey }` reads it.)',
  })
  async rotateKeys(@Arg('input') input: RotateKeysInput, @Ctx() ctx: GraphqlContext): Promise<RotatedKeysType> {
    const rotated = await ctx.services.merchants.rotateKeys(await ctx.tenant(), input.keys, input.graceSeconds ?? 0);
    return {
      publicKey: rotated.publicKey ?? null,
      privateKey: rotated.privateKey ?? null,
      encryptionKey: rotated.encryptionKey ?? null,
      previousKeysExpireAt: rotated.previousKeysExpireAt,
    };
  }
}
