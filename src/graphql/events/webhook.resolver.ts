import { Arg, Authorized, Ctx, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphqlContext } from '../context';
import { RotatedWebhookSecretType, WebhookDeliveryType, WebhookSettingsType } from './webhook.types';
import { toWebhookDeliveryType } from './webhook.mapping';

@Resolver()
export class WebhookResolver {
  @Authorized('developers')
  @Query(() => [WebhookDeliveryType], { description: 'Webhook deliveries of the environment, newest first, with their attempts; private key only.' })
  async webhookDeliveries(
    @Arg('eventId', () => String, { nullable: true }) eventId: string | null,
    @Arg('orderReference', () => String, { nullable: true }) orderReference: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<WebhookDeliveryType[]> {
    return (await ctx.services.webhooks.listDeliveries(await ctx.tenant(), { eventId, orderReference, limit })).map(toWebhookDeliveryType);
  }

  @Authorized('secrets')
  @Mutation(() => RotatedWebhookSecretType, {
    description:
      "Replaces the webhook signing secret of the key's environment (each environment has its own); during overlapSeconds (0 to 604800, default 0) deliveries carry a signature under the old secret as well. A private key without an expiry only.",
  })
  async rotateWebhookSecret(
    @Arg('overlapSeconds', () => Int, { nullable: true }) overlapSeconds: number | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<RotatedWebhookSecretType> {
    return ctx.services.signingSecrets.rotate(await ctx.tenant(), overlapSeconds ?? 0);
  }

  @Authorized('developers')
  @Query(() => WebhookSettingsType)
  async webhookSettings(@Ctx() ctx: GraphqlContext): Promise<WebhookSettingsType> {
    return { webhookUrl: await ctx.services.webhookEndpoints.getWebhookUrl(await ctx.tenant()) };
  }

  @Authorized('developers')
  @Mutation(() => WebhookSettingsType, { description: "Sets (or, with null, removes) the environment's webhook URL; private key only." })
  async setWebhookUrl(@Arg('url', () => String, { nullable: true }) url: string | null, @Ctx() ctx: GraphqlContext): Promise<WebhookSettingsType> {
    return { webhookUrl: await ctx.services.webhookEndpoints.setWebhookUrl(await ctx.tenant(), url) };
  }

  @Authorized('developers')
  @Mutation(() => WebhookDeliveryType, { description: 'Sends a test ping (notify "test_assess") to the webhook URL; private key only.' })
  async sendTestWebhook(@Ctx() ctx: GraphqlContext): Promise<WebhookDeliveryType> {
    return toWebhookDeliveryType(await ctx.services.webhooks.sendTestPing(await ctx.tenant()));
  }

  @Authorized('developers')
  @Mutation(() => WebhookDeliveryType, { description: 'Delivers a stored event again, with the same eventId; private key only.' })
  async redeliverWebhook(@Arg('eventId') eventId: string, @Ctx() ctx: GraphqlContext): Promise<WebhookDeliveryType> {
    return toWebhookDeliveryType(await ctx.services.webhooks.redeliver(await ctx.tenant(), eventId));
  }
}
