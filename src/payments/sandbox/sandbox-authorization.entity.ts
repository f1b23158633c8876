import { Entity, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';

export type SandboxAuthorizationState = 'pending' | 'approved' | 'declined';

/**
 * The sandbox acquirer's own memory of an authorization: the outcome it decided for the
 * card, kept under an opaque token (never the card number), as a real acquirer keeps its
 * state on its side. Each call is remembered under the caller's idempotency key, so a
 * repeated call returns the first answer and `lookup` can tell what became of an attempt.
 */
@Entity({ tableName: 'sandbox_authorization' })
export class SandboxAuthorization {
  [OptionalProps]?:
    | 'createdAt'
    | 'settledAs'
    | 'state'
    | 'idempotencyKey'
    | 'resultCode'
    | 'resultMessage'
    | 'refundDecline'
    | 'amount'
    | 'currency'
    | 'orderReference'
    | 'disputeReason';

  @PrimaryKey({ type: 'string', length: 60 })
  token!: string;

  /**
   * card: a card authorization; paypal: a PayPal approval; charge: a saved-card charge; refund: a
   * refund of one of those; capture / void: of an approved authorization; closed: a key closed
   * before any call reached the sandbox with it (a later call gets this record, declined).
   */
  @Property({ type: 'string', length: 10 })
  kind!: 'card' | 'paypal' | 'charge' | 'refund' | 'capture' | 'void' | 'closed';

  /** What the issuer will answer once the cardholder is authenticated. */
  @Property({ type: 'string', length: 10 })
  outcomeCode!: string;

  @Property({ type: 'string', length: 100 })
  outcomeMessage!: string;

  @Property({ type: 'string', length: 100 })
  issuer!: string;

  /** pending: awaiting 3-D Secure or PayPal approval; approved / declined: final. */
  @Property({ type: 'string', length: 20, default: 'pending' })
  state: SandboxAuthorizationState = 'pending';

  @Property({ type: 'string', length: 60, nullable: true, unique: 'sandbox_authorization_idempotency_key_unique' })
  idempotencyKey: string | null = null;

  /** The final answer given (which may differ from the outcome: a failed OTP, a cancelled approval). */
  @Property({ type: 'string', length: 10, nullable: true })
  resultCode: string | null = null;

  @Property({ type: 'string', length: 100, nullable: true })
  resultMessage: string | null = null;

  /** Why the issuer declines every refund of this card (null: it accepts them). */
  @Property({ type: 'string', length: 100, nullable: true })
  refundDecline: string | null = null;

  /** The amount authorized (card, PayPal and saved-card charges; null on refunds and older rows). */
  @Property({ type: 'decimal', precision: 20, scale: 4, nullable: true })
  amount: string | null = null;

  @Property({ type: 'string', length: 3, columnType: 'char(3)', nullable: true })
  currency: string | null = null;

  /** The engine's reference of the order paid (its processor reference). */
  @Property({ type: 'string', length: 40, nullable: true })
  orderReference: string | null = null;

  /** Why the cardholder disputes every approved payment of this card (null: never); the sandbox then files a dispute. */
  @Property({ type: 'string', length: 100, nullable: true })
  disputeReason: string | null = null;

  /** An approved authorization captured or voided ('capture' / 'void'), once: a later capture or void of it is declined. */
  @Property({ type: 'string', length: 10, nullable: true })
  settledAs: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
