import { OptionalProps, Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { OutboxEvent } from './outbox-event.entity';

export type DeliveryState = 'pending' | 'delivered' | 'dead';

/** Delivery of one outbox event to one URL; claimed by workers with FOR UPDATE SKIP LOCKED. */
@Entity({ tableName: 'webhook_delivery' })
@Index({ name: 'webhook_delivery_due_index', properties: ['state', 'nextAttemptAt'] })
export class WebhookDelivery {
  [OptionalProps]?: 'state' | 'attemptCount' | 'nextAttemptAt' | 'lockedUntil' | 'deliveredAt' | 'createdAt';

  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @ManyToOne(() => OutboxEvent, { deleteRule: 'cascade', index: true })
  event!: OutboxEvent;

  @Property({ type: 'text' })
  url!: string;

  /** The URL's origin (scheme, host, port): requests in flight are limited per destination. */
  @Property({ type: 'text' })
  destination!: string;

  @Enum({ items: ['pending', 'delivered', 'dead'] })
  state: DeliveryState = 'pending';

  @Property({ type: 'integer', default: 0 })
  attemptCount: number = 0;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  nextAttemptAt: Date = new Date();

  /** A claimed delivery whose worker died becomes due again after this instant. */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  lockedUntil: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  deliveredAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
