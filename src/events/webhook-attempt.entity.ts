import { OptionalProps, Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { WebhookDelivery } from './webhook-delivery.entity';

/** One HTTP attempt of a delivery, as shown to the merchant. */
@Entity({ tableName: 'webhook_attempt' })
export class WebhookAttempt {
  [OptionalProps]?: 'statusCode' | 'error' | 'responseBody' | 'createdAt';

  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @ManyToOne(() => WebhookDelivery, { deleteRule: 'cascade', index: true })
  delivery!: WebhookDelivery;

  @Property({ type: 'integer', nullable: true })
  statusCode: number | null = null;

  @Property({ type: 'integer' })
  latencyMs!: number;

  @Property({ type: 'text', nullable: true })
  error: string | null = null;

  /** At most the first 1 KiB of the response body. */
  @Property({ type: 'text', nullable: true })
  responseBody: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
