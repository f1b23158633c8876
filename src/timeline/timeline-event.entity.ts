import { OptionalProps, Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Order } from '../orders/order.entity';

export type TimelineSource = 'system' | 'merchant';

/** One entry of an order's transaction timeline; read oldest first (by id). */
@Entity({ tableName: 'timeline_event' })
@Index({ properties: ['order', 'id'] })
export class TimelineEvent {
  [OptionalProps]?: 'description' | 'metadata' | 'createdAt';

  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @ManyToOne(() => Order, { deleteRule: 'cascade' })
  order!: Order;

  @Property({ type: 'string', length: 100 })
  event!: string;

  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Enum({ items: ['system', 'merchant'] })
  source!: TimelineSource;

  @Property({ type: 'json', nullable: true })
  metadata: Record<string, unknown> | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
