import { Entity, Index, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';

/** The sandbox acquirer's side of a dispute (its status words are its own, lower case). */
export type SandboxDisputeState = 'needs_response' | 'won' | 'lost' | 'accepted';

/**
 * The sandbox acquirer's own record of a dispute, filed when it approves a payment of a card
 * whose cardholder disputes (4000000000000259), as a real acquirer keeps its disputes on its
 * side. The engine reads its notices (a status not yet acknowledged) with the dispute job and
 * acknowledges each once applied, so a notice lost to a crash is read again.
 */
@Entity({ tableName: 'sandbox_dispute' })
@Index({
  name: 'sandbox_dispute_unacknowledged_index',
  expression: `create index "sandbox_dispute_unacknowledged_index" on "sandbox_dispute" ("created_at") where "acknowledged" is distinct from "state"`,
})
export class SandboxDispute {
  [OptionalProps]?: 'state' | 'evidence' | 'answerKey' | 'acknowledged' | 'createdAt';

  @PrimaryKey({ type: 'string', length: 60 })
  token!: string;

  /** The disputed payment's token (one dispute per payment). */
  @Property({ type: 'string', length: 60, unique: 'sandbox_dispute_payment_token_unique' })
  paymentToken!: string;

  /** The engine's reference of the order paid (its processor reference). */
  @Property({ type: 'string', length: 40 })
  orderReference!: string;

  @Property({ type: 'decimal', precision: 20, scale: 4 })
  amount!: string;

  @Property({ type: 'string', length: 3, columnType: 'char(3)' })
  currency!: string;

  @Property({ type: 'string', length: 100 })
  reason!: string;

  @Property({ type: 'string', length: 20, default: 'needs_response' })
  state: SandboxDisputeState = 'needs_response';

  @Property({ type: 'datetime', columnType: 'timestamptz(6)' })
  evidenceDueBy!: Date;

  @Property({ type: 'text', nullable: true })
  evidence: string | null = null;

  /** The key of the merchant's answer: the same answer sent again changes nothing. */
  @Property({ type: 'string', length: 60, nullable: true })
  answerKey: string | null = null;

  /** The last state the engine acknowledged; a different `state` is a notice still to deliver. */
  @Property({ type: 'string', length: 20, nullable: true })
  acknowledged: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
