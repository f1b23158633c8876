import { Check, Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';
import { Order } from '../orders/order.entity';
import type { RefundStatus } from './payment-state';

/**
 * Money given back to the customer of a paid order, in whole or in part. Recorded PENDING (and
 * committed) before the processor is called with the refund's id as idempotency key; settled
 * SUCCEEDED or FAILED from the processor's answer (or its record, after a crash) through the
 * transitions table (payment-state.ts). The order itself stays Successful.
 */
@Entity({ tableName: 'refund' })
@Check({ name: 'refund_amount_positive', expression: '"amount" > 0' })
@Index({ name: 'refund_order_id_created_at_index', properties: ['order', 'createdAt'] })
// The reconciliation job reads the refunds still with the processor.
@Index({ name: 'refund_pending_index', expression: `create index "refund_pending_index" on "refund" ("created_at") where "status" = 'PENDING'` })
@Unique({ name: 'refund_environment_idempotency_key_unique', properties: ['environment', 'idempotencyKey'] })
export class Refund {
  [OptionalProps]?: 'reason' | 'failureReason' | 'idempotencyKey' | 'requestedAmount' | 'processorReference' | 'createdAt' | 'updatedAt';

  /** Public id (a UUID), also the processor's idempotency key for this refund. */
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @ManyToOne(() => Order, { deleteRule: 'cascade' })
  order!: Order;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade' })
  environment!: AppEnvironment;

  @Property({ type: 'decimal', precision: 20, scale: 4 })
  amount!: string;

  @Property({ type: 'string', length: 3, columnType: 'char(3)' })
  currency!: string;

  @Enum({ items: ['PENDING', 'SUCCEEDED', 'FAILED'] })
  status!: RefundStatus;

  /** The merchant's reason, as given. */
  @Property({ type: 'text', nullable: true })
  reason: string | null = null;

  /** Why the processor refused it (FAILED only). */
  @Property({ type: 'text', nullable: true })
  failureReason: string | null = null;

  /** The caller's idempotency key (unique per environment); null when none was given. */
  @Property({ type: 'string', length: 255, nullable: true })
  idempotencyKey: string | null = null;

  /** The amount as asked (null: "all that remains"): a repeat of the key must ask the same. */
  @Property({ type: 'decimal', precision: 20, scale: 4, nullable: true })
  requestedAmount: string | null = null;

  /** The processor's reference of the refund, once it answered. */
  @Property({ type: 'string', length: 60, nullable: true })
  processorReference: string | null = null;

  /** Real time (not the business clock): the reconciliation job measures how long the processor has had it. */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
