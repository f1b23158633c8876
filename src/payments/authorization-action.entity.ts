import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';
import { Order } from '../orders/order.entity';

export type AuthorizationActionKind = 'capture' | 'void';
export type AuthorizationActionState = 'pending' | 'succeeded' | 'failed';

/** The fee of a capture, computed on the amount captured when it was asked for (applied to the order when the processor confirms). */
export interface CaptureQuote {
  fee: string;
  feeRate: string;
  subsidiaryFee: string;
  customerFee: string;
  totalChargedAmount: string;
}

/**
 * One capture or void of an Authorized order, as the processor is asked for it: recorded (and
 * committed) before the call, settled from the answer, or from the processor's record of the
 * call when the answer was lost. At most one is pending per order (a partial unique index), so a
 * capture and a void asked for at the same moment never both reach the processor.
 */
@Entity({ tableName: 'authorization_action' })
@Index({
  name: 'authorization_action_one_pending_per_order',
  expression: `create unique index "authorization_action_one_pending_per_order" on "authorization_action" ("order_id") where "state" = 'pending'`,
})
@Index({ name: 'authorization_action_state_created_at_index', properties: ['state', 'createdAt'] })
// The merchant's idempotency key: one capture or void per key in an environment.
@Unique({ name: 'authorization_action_environment_merchant_key_unique', properties: ['environment', 'merchantKey'] })
export class AuthorizationAction {
  [OptionalProps]?:
    'amount' | 'quote' | 'state' | 'responseCode' | 'responseMessage' | 'settledAt' | 'createdAt' | 'environment' | 'merchantKey' | 'requestedAmount';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => Order, { deleteRule: 'cascade', index: true })
  order!: Order;

  @Property({ type: 'string', length: 10 })
  kind!: AuthorizationActionKind;

  /** Who asked: the merchant (`capture`, `void`) or the clock (`expiry`), as the transitions table names them. */
  @Property({ type: 'string', length: 20 })
  actor!: 'capture' | 'void' | 'expiry';

  /** A capture's amount (before the customer's fee); null for a void. */
  @Property({ type: 'decimal', precision: 20, scale: 4, nullable: true })
  amount: string | null = null;

  @Property({ type: 'json', nullable: true })
  quote: CaptureQuote | null = null;

  /** The order's environment: the scope of the merchant's key. Null only on rows written before merchant keys existed and not backfilled. */
  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade', nullable: true })
  environment: AppEnvironment | null = null;

  /**
   * The merchant's idempotencyKey of the captureOrder / voidOrder that asked for it (unique per
   * environment), null when none was given or the clock asked. A retry with the key finds this
   * action, and through it the processor's key below.
   */
  @Property({ type: 'string', length: 255, nullable: true })
  merchantKey: string | null = null;

  /** A capture's amount as asked (null: "all that was authorized"): a repeat of the key must ask the same. */
  @Property({ type: 'decimal', precision: 20, scale: 4, nullable: true })
  requestedAmount: string | null = null;

  /** Sent with every processor call of this action, its own (`capture:<orderId>:<random>`, `void:<orderId>:<random>`). */
  @Property({ type: 'string', length: 60 })
  idempotencyKey!: string;

  @Property({ type: 'string', length: 20, default: 'pending' })
  state: AuthorizationActionState = 'pending';

  @Property({ type: 'string', length: 10, nullable: true })
  responseCode: string | null = null;

  @Property({ type: 'text', nullable: true })
  responseMessage: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  settledAt: Date | null = null;
}
