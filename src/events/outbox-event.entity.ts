import { OptionalProps, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';
import { Order } from '../orders/order.entity';

/**
 * Transactional outbox: written in the same transaction as the state change it reports,
 * and the only source of webhooks and subscription events.
 */
@Entity({ tableName: 'outbox_event' })
@Index({ properties: ['order', 'sequence'] })
export class OutboxEvent {
  [OptionalProps]?: 'order' | 'sequence' | 'createdAt';

  /** The eventId merchants see; also the Standard Webhooks `webhook-id`. */
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade', index: true })
  environment!: AppEnvironment;

  @ManyToOne(() => Order, { nullable: true, deleteRule: 'cascade' })
  order: Order | null = null;

  /** `transaction`, `refund` or `test_assess`. */
  @Property({ type: 'string', length: 40 })
  notify!: string;

  /** `successful`, `failed`, … */
  @Property({ type: 'string', length: 40 })
  notifyType!: string;

  @Property({ type: 'integer', default: 0 })
  sequence: number = 0;

  /**
   * The full body as delivered, frozen at the time of the change. `json`, not `jsonb`: the
   * text is kept exactly as written, so every attempt sends the same bytes in the documented order.
   */
  @Property({ type: 'json', columnType: 'json' })
  payload!: Record<string, unknown>;

  /** Indexed: a LISTEN connection that was down reads back the events it missed by time. */
  @Index()
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
