import { Field, Int, ObjectType } from 'type-graphql';

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
  @Field({ description: 'transaction, refund or test_assess' }) notify!: string;
  @Field({ description: 'successful, failed, authorized or voided (transaction), succeeded or failed (refund), or test_assess' }) notifyType!: string;
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
