import { Check, OptionalProps, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Order } from './order.entity';
import { OrderStatus } from './order-status';

/** One attempt to pay an order (card or PayPal). */
@Check({ name: 'order_payment_amount_positive', expression: '"amount" > 0 and "fee" >= 0' })
@Entity({ tableName: 'order_payment' })
// The sweeps' indexes hold only the attempts they look for: awaiting authentication, by deadline;
// with the processor (Processing), by start, oldest first (an approved attempt has no entry).
@Index({
  name: 'order_payment_awaiting_authentication_expires_at_index',
  expression: `create index "order_payment_awaiting_authentication_expires_at_index" on "order_payment" ("authentication_expires_at") where "status_id" = ${OrderStatus.PendingAuthentication}`,
})
@Index({
  name: 'order_payment_processing_started_at_index',
  expression: `create index "order_payment_processing_started_at_index" on "order_payment" ("processing_started_at" nulls first) where "status_id" = ${OrderStatus.Processing}`,
})
export class OrderPayment {
  [OptionalProps]?:
    'instrument' | 'remarks' | 'processorToken' | 'authenticationExpiresAt' | 'processingStartedAt' | 'returnedToMerchantAt' | 'dateCreated' | 'dateUpdated';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => Order, { deleteRule: 'cascade', index: true })
  order!: Order;

  @Property({ type: 'string', length: 40, unique: true })
  reference!: string;

  /** 2 = Card Payment, 3 = PayPal. */
  @Property({ type: 'smallint' })
  paymentOptionId!: number;

  @Property({ type: 'string', length: 40 })
  paymentOption!: string;

  @Property({ type: 'smallint' })
  statusId!: number;

  @Property({ type: 'string', length: 10 })
  responseCode!: string;

  @Property({ type: 'text' })
  responseMessage!: string;

  @Property({ type: 'text', nullable: true })
  instrument: string | null = null;

  @Property({ type: 'text', default: '' })
  remarks: string = '';

  @Property({ type: 'decimal', precision: 20, scale: 4 })
  amount!: string;

  @Property({ type: 'decimal', precision: 20, scale: 4 })
  fee!: string;

  /** Token of the processor for the authorized instrument (never the card number). */
  @Property({ type: 'string', length: 100, nullable: true })
  processorToken: string | null = null;

  /** Unfinished 3-D Secure / PayPal authentication fails after this instant. */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  authenticationExpiresAt: Date | null = null;

  /**
   * When the processor call of this attempt started (status 3, Processing). The payment's
   * reference is the idempotency key of every processor call made for it.
   */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  processingStartedAt: Date | null = null;

  /**
   * When the customer was sent back to the merchant's RedirectUrl after this attempt finished:
   * once only (MerchantReturnService), never again for whoever opens the page later.
   */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  returnedToMerchantAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  dateCreated: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()', onUpdate: () => new Date() })
  dateUpdated: Date = new Date();
}
