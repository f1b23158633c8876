import { Arg, Authorized, Ctx, Field, Int, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import type { GraphqlContext } from '../context';
import type { WebhookDeliveryView } from '../../events/webhook-dispatcher';

@ObjectType('WebhookAttempt', { description: 'One HTTP attempt of a webhook delivery.' })
export class WebhookAttemptType {
  @Field() id!: string;
  @Field(() => Int, { nullable: true, description: "The receiver's HTTP status; null when none arrived in time." }) statusCode!: number | null;
  @Field(() => Int) latencyMs!: number;
  @Field(() => String, { nullable: true }) error!: string | null;
  @Field(() => String, { nullable: true, description: "At most the first 1 KiB of the receiver's answer." }) responseBody!: string | null;
  @Field() createdAt!: Date;
}

@ObjectType('WebhookDelivery', { description: 'One delivery of one event to the webhook URL, with every attempt.' })
export class WebhookDeliveryType {
  @Field() id!: string;
  @Field({ description: 'Also the webhook-id header; every retry and redelivery carries it.' }) eventId!: string;
  @Field({ description: 'transaction or test_assess' }) notify!: string;
  @Field({ description: 'successful, failed or test_assess' }) notifyType!: string;
  @Field(() => String, { nullable: true }) orderReference!: string | null;
  @Field(() => Int) sequence!: number;
  @Field() url!: string;
  @Field({ description: 'pending, delivered or dead' }) state!: string;
  @Field(() => Int) attemptCount!: number;
  @Field(() => Date, { nullable: true }) nextAttemptAt!: Date | null;
  @Field(() => Date, { nullable: true }) deliveredAt!: Date | null;
  @Field() createdAt!: Date;
  @Field(() => [WebhookAttemptType]) attempts!: WebhookAttemptType[];
}

@ObjectType('WebhookSettings')
export class WebhookSettingsType {
  @Field(() => String, { nullable: true, description: "The key's environment's webhook URL; null when none." }) webhookUrl!: string | null;
}

@ObjectType('RotatedWebhookSecret')
export class RotatedWebhookSecretType {
  @Field({ description: 'The new signing secret (whsec_…): shown once.' }) webhookSecret!: string;
  @Field({ description: 'Until then deliveries are signed with the replaced secret too.' }) previousSecretExpiresAt!: Date;
}

const view = (d: WebhookDeliveryView): WebhookDeliveryType => ({ ...d, state: d.state });

@Resolver()
export class WebhookResolver {
  @Authorized('PRIVATE_KEY')
  @Query(() => [WebhookDeliveryType], { description: 'Webhook deliveries of the environment, newest first, with their attempts; private key only.' })
  async webhookDeliveries(
    @Arg('eventId', () => String, { nullable: true }) eventId: string | null,
    @Arg('orderReference', () => String, { nullable: true }) orderReference: string | null,
    @Arg('limit', () => Int, { nullable: true }) limit: number | null,
    @Ctx() ctx: GraphqlContext,
  ): Promise<WebhookDeliveryType[]> {
    return (await ctx.services.webhooks.listDeliveries(await ctx.tenant(), { eventId, orderReference, limit })).map(view);
  }

  @Authorized('PRIVATE_KEY')
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

  @Authorized('PRIVATE_KEY')
  @Query(() => WebhookSettingsType)
  async webhookSettings(@Ctx() ctx: GraphqlContext): Promise<WebhookSettingsType> {
    return { webhookUrl: await ctx.services.webhookEndpoints.getWebhookUrl(await ctx.tenant()) };
  }

  @Authorized('PRIVATE_KEY')
  @Mutation(() => WebhookSettingsType, { description: "Sets (or, with null, removes) the environment's webhook URL; private key only." })
  async setWebhookUrl(@Arg('url', () => String, { nullable: true }) url: string | null, @Ctx() ctx: GraphqlContext): Promise<WebhookSettingsType> {
    return { webhookUrl: await ctx.services.webhookEndpoints.setWebhookUrl(await ctx.tenant(), url) };
  }

  @Authorized('PRIVATE_KEY')
  @Mutation(() => WebhookDeliveryType, { description: 'Sends a test ping (notify "test_assess") to the webhook URL; private key only.' })
  async sendTestWebhook(@Ctx() ctx: GraphqlContext): Promise<WebhookDeliveryType> {
    return view(await ctx.services.webhooks.sendTestPing(await ctx.tenant()));
  }

  @Authorized('PRIVATE_KEY')
  @Mutation(() => WebhookDeliveryType, { description: 'Delivers a stored event again, with the same eventId; private key only.' })
  async redeliverWebhook(@Arg('eventId') eventId: string, @Ctx() ctx: GraphqlContext): Promise<WebhookDeliveryType> {
    return view(await ctx.services.webhooks.redeliver(await ctx.tenant(), eventId));
  }
}
