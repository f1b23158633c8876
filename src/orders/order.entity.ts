import { Check, OptionalProps, Entity, Enum, Index, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';
import { PaymentLink } from '../links/payment-link.entity';
import { Frequency } from '../links/frequency.entity';
import { CAPTURE_METHODS, type CaptureMethod } from '../links/capture-method';
import { Customer } from './customer.entity';
import { OrderStatus, type OrderStatusId } from './order-status';

/**
 * One customer payment. The reference is unique per merchant environment (the environment
 * row belongs to exactly one merchant), enforced by the database.
 */
@Check({ name: 'checkout_order_amount_positive', expression: '"amount" > 0' })
@Check({
  name: 'checkout_order_fees_non_negative',
  expression: '"fee" >= 0 and "subsidiary_fee" >= 0 and "customer_fee" >= 0 and "total_charged_amount" >= "amount"',
})
@Check({ name: 'checkout_order_status_known', expression: '"status_id" >= 1 and "status_id" <= 7' })
// A payment link's orders by status (its usage); orders taken without a link have no entry.
@Index({
  name: 'checkout_order_payment_link_id_status_id_index',
  expression:
    'create index "checkout_order_payment_link_id_status_id_index" on "checkout_order" ("payment_link_id", "status_id") where "payment_link_id" is not null',
})
@Entity({ tableName: 'checkout_order' })
@Unique({ name: 'checkout_order_environment_reference_unique', properties: ['environment', 'reference'] })
// Keyset pages newest first, plain and filtered by status, payment method or e-mail (docs/performance.md).
@Index({ name: 'checkout_order_env_created_id_index', properties: ['environment', 'createdAt', 'id'] })
@Index({ name: 'checkout_order_env_status_created_id_index', properties: ['environment', 'statusId', 'createdAt', 'id'] })
@Index({ name: 'checkout_order_env_method_created_id_index', properties: ['environment', 'paymentMethod', 'createdAt', 'id'] })
@Index({ name: 'checkout_order_env_email_created_id_index', properties: ['environment', 'customerEmail', 'createdAt', 'id'] })
@Index({
  name: 'checkout_order_env_reference_prefix_index',
  expression: 'create index "checkout_order_env_reference_prefix_index" on "checkout_order" ("environment_id", "reference" varchar_pattern_ops)',
})
// A subscription's charges by status (a charge still with the processor holds its next one back).
@Index({
  name: 'checkout_order_recurring_payment_id_status_id_index',
  expression:
    'create index "checkout_order_recurring_payment_id_status_id_index" on "checkout_order" ("recurring_payment_id", "status_id") where "recurring_payment_id" is not null',
})
// The sweeps' indexes hold only the rows they look for (a settled order has no entry to write):
// unpaid orders with an expiry (Initiated; only the hosted page's orders have one) by expiry,
// and authorizations left uncaptured past AUTHORIZATION_TTL_HOURS (Authorized) by age
// (docs/capture.md).
@Index({
  name: 'checkout_order_initiated_expires_at_index',
  expression: `create index "checkout_order_initiated_expires_at_index" on "checkout_order" ("expires_at") where "status_id" = ${OrderStatus.Initiated} and "expires_at" is not null`,
})
@Index({
  name: 'checkout_order_authorized_authorized_at_index',
  expression: `create index "checkout_order_authorized_authorized_at_index" on "checkout_order" ("authorized_at") where "status_id" = ${OrderStatus.Authorized}`,
})
export class Order {
  [OptionalProps]?:
    | 'customer'
    | 'fee'
    | 'feeRate'
    | 'subsidiaryFee'
    | 'customerFee'
    | 'statusId'
    | 'remarks'
    | 'paymentMethod'
    | 'paymentResponseCode'
    | 'paymentResponseMessage'
    | 'paymentLink'
    | 'frequency'
    | 'numberOfPayments'
    | 'recurringPaymentId'
    | 'recurringPaymentReference'
    | 'ipAddress'
    | 'customerEmail'
    | 'customerFirstName'
    | 'customerLastName'
    | 'customerMobile'
    | 'customerCountry'
    | 'expiresAt'
    | 'captureMethod'
    | 'authorizedAt'
    | 'authorizedAmount'
    | 'providerResponseDate'
    | 'datePaymentConfirmed'
    | 'eventSequence'
    | 'createdAt'
    | 'updatedAt';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade' })
  environment!: AppEnvironment;

  @Property({ type: 'string', length: 100 })
  reference!: string;

  /** Our own reference toward the processor. */
  @Property({ type: 'string', length: 40, unique: true })
  processorReference!: string;

  @Property({ type: 'string', length: 40, unique: true })
  paymentReference!: string;

  @ManyToOne(() => Customer, { nullable: true })
  customer: Customer | null = null;

  /** The customer as given when the order was created: what every read of the order shows. */
  @Property({ type: 'string', length: 320, nullable: true })
  customerEmail: string | null = null;

  @Property({ type: 'string', length: 100, nullable: true })
  customerFirstName: string | null = null;

  @Property({ type: 'string', length: 100, nullable: true })
  customerLastName: string | null = null;

  @Property({ type: 'string', length: 40, nullable: true })
  customerMobile: string | null = null;

  @Property({ type: 'string', length: 2, columnType: 'char(2)', nullable: true })
  customerCountry: string | null = null;

  /** An order still Initiated at this instant fails (orders of the hosted payment-link page); null: never. */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  expiresAt: Date | null = null;

  /** The order's amount; once a MANUAL order is captured, the amount captured (authorizedAmount keeps what was held). */
  @Property({ type: 'decimal', precision: 20, scale: 4 })
  amount!: string;

  /** AUTOMATIC: an approved payment is taken at once; MANUAL: it is held (Authorized) until captured or voided. */
  @Enum({ items: [...CAPTURE_METHODS], default: 'AUTOMATIC' })
  captureMethod: CaptureMethod = 'AUTOMATIC';

  /** When the processor approved the payment of a MANUAL order (the authorization's age counts from it); null otherwise. */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  authorizedAt: Date | null = null;

  /** The amount held by that approval (the order's amount then, before any partial capture); null otherwise. */
  @Property({ type: 'decimal', precision: 20, scale: 4, nullable: true })
  authorizedAmount: string | null = null;

  @Property({ type: 'string', length: 3, columnType: 'char(3)' })
  currency!: string;

  /** Fee quoted for the order at creation (card option), and how it splits. */
  @Property({ type: 'decimal', precision: 20, scale: 4, default: '0' })
  fee: string = '0';

  @Property({ type: 'decimal', precision: 10, scale: 6, nullable: true })
  feeRate: string | null = null;

  @Property({ type: 'decimal', precision: 20, scale: 4, default: '0' })
  subsidiaryFee: string = '0';

  @Property({ type: 'decimal', precision: 20, scale: 4, default: '0' })
  customerFee: string = '0';

  @Property({ type: 'decimal', precision: 20, scale: 4 })
  totalChargedAmount!: string;

  @Property({ type: 'smallint' })
  statusId: OrderStatusId = OrderStatus.Initiated;

  @Property({ type: 'text' })
  narration!: string;

  @Property({ type: 'text', default: '' })
  remarks: string = '';

  @Property({ type: 'text' })
  redirectUrl!: string;

  @Property({ type: 'string', length: 20, nullable: true })
  paymentMethod: string | null = null;

  @Property({ type: 'string', length: 10, nullable: true })
  paymentResponseCode: string | null = null;

  @Property({ type: 'text', nullable: true })
  paymentResponseMessage: string | null = null;

  @ManyToOne(() => PaymentLink, { nullable: true })
  paymentLink: PaymentLink | null = null;

  @ManyToOne(() => Frequency, { nullable: true })
  frequency: Frequency | null = null;

  @Property({ type: 'integer', nullable: true })
  numberOfPayments: number | null = null;

  @Property({ type: 'integer', nullable: true })
  recurringPaymentId: number | null = null;

  @Property({ type: 'string', length: 40, nullable: true })
  recurringPaymentReference: string | null = null;

  @Property({ type: 'string', length: 45, nullable: true })
  ipAddress: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  providerResponseDate: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  datePaymentConfirmed: Date | null = null;

  /** Per-order sequence of emitted events, so receivers can drop stale ones. */
  @Property({ type: 'integer', default: 0 })
  eventSequence: number = 0;

  /** Optimistic lock: a concurrent state change of the same order fails instead of overwriting. */
  @Property({ type: 'integer', version: true })
  version!: number;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
