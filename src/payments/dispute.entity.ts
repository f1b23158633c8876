import { Check, Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';
import { Order } from '../orders/order.entity';
import type { DisputeStatus } from './payment-state';

/**
 * A chargeback the cardholder's bank opened against a paid order, as the processor reported it:
 * opened NEEDS_RESPONSE, answered by the merchant before `evidenceDueBy` (evidence, or giving up),
 * decided by the processor. Every move goes through the transitions table (payment-state.ts). A
 * LOST or ACCEPTED dispute takes its amount off the order's balance (BALANCE_DEDUCTIONS, refund.queries.ts).
 */
@Entity({ tableName: 'dispute' })
@Check({ name: 'dispute_amount_positive', expression: '"amount" > 0' })
@Index({ name: 'dispute_order_id_created_at_index', properties: ['order', 'createdAt'] })
// The list of an environment's disputes, newest first, with or without a status filter.
@Index({ name: 'dispute_env_created_id_index', properties: ['environment', 'createdAt', 'id'] })
@Index({ name: 'dispute_env_status_created_id_index', properties: ['environment', 'status', 'createdAt', 'id'] })
// The dispute job reads the disputes past their deadline, and the answers the processor has not acknowledged.
@Index({
  name: 'dispute_needs_response_due_index',
  expression: `create index "dispute_needs_response_due_index" on "dispute" ("evidence_due_by") where "status" = 'NEEDS_RESPONSE'`,
})
@Index({
  name: 'dispute_answer_unsent_index',
  expression: `create index "dispute_answer_unsent_index" on "dispute" ("answered_at") where "answered_at" is not null and "answer_sent_at" is null`,
})
@Unique({ name: 'dispute_processor_reference_unique', properties: ['processorReference'] })
export class Dispute {
  [OptionalProps]?: 'evidence' | 'answeredAt' | 'answerSentAt' | 'decidedAt' | 'createdAt' | 'updatedAt';

  /** Public id (a UUID), also the key of the merchant's answer toward the processor. */
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  @ManyToOne(() => Order, { deleteRule: 'cascade' })
  order!: Order;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade' })
  environment!: AppEnvironment;

  /** As the processor reported it: exact, in the order's currency. */
  @Property({ type: 'decimal', precision: 20, scale: 4 })
  amount!: string;

  @Property({ type: 'string', length: 3, columnType: 'char(3)' })
  currency!: string;

  /** The bank's reason, as the processor names it (e.g. `fraudulent`). */
  @Property({ type: 'string', length: 100 })
  reason!: string;

  @Enum({ items: ['NEEDS_RESPONSE', 'UNDER_REVIEW', 'WON', 'LOST', 'ACCEPTED'] })
  status!: DisputeStatus;

  /** The deadline of the merchant's answer; past it, an unanswered dispute is lost. */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)' })
  evidenceDueBy!: Date;

  /** The merchant's evidence, as submitted. */
  @Property({ type: 'text', nullable: true })
  evidence: string | null = null;

  /** When the merchant answered (evidence or acceptance); null: not answered. */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  answeredAt: Date | null = null;

  /** When the processor took the answer; null while it has not (the dispute job sends it again). */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  answerSentAt: Date | null = null;

  /** When it became WON, LOST or ACCEPTED. */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  decidedAt: Date | null = null;

  /** The processor's id of the dispute: a notice applied twice opens nothing twice. */
  @Property({ type: 'string', length: 60 })
  processorReference!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
