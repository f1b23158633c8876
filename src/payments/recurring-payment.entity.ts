import { Check, OptionalProps, Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';
import { Frequency } from '../links/frequency.entity';
import { Order } from '../orders/order.entity';

/** `stopped`: the payment link's rules ended it (the link no longer sells this subscription). */
export type RecurringState = 'pending' | 'active' | 'completed' | 'cancelled' | 'failed' | 'stopped';

/**
 * A renewal in flight: `claimed` once its order is recorded (nothing sent yet), `charging` once its
 * charge is sent to the processor; null again when the renewal is settled.
 */
export type RenewalChargeState = 'claimed' | 'charging';

/** A subscription: charges the saved card token at the frequency until the number of payments is reached. */
@Check({ name: 'recurring_payment_counts', expression: '"number_of_payments" > 0 and "payments_made" >= 0 and "payments_made" <= "number_of_payments"' })
@Entity({ tableName: 'recurring_payment' })
@Index({ name: 'recurring_payment_due_index', properties: ['state', 'nextChargeAt'] })
export class RecurringPayment {
  [OptionalProps]?: 'paymentsMade' | 'consecutiveFailures' | 'state' | 'chargeState' | 'cardToken' | 'nextChargeAt' | 'createdAt' | 'updatedAt';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @Property({ type: 'string', length: 40, unique: true })
  reference!: string;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade' })
  environment!: AppEnvironment;

  /** The order whose payment set the subscription up. */
  @ManyToOne(() => Order, { deleteRule: 'cascade' })
  order!: Order;

  @ManyToOne(() => Frequency)
  frequency!: Frequency;

  @Property({ type: 'integer' })
  numberOfPayments!: number;

  @Property({ type: 'integer', default: 0 })
  paymentsMade: number = 0;

  @Property({ type: 'integer', default: 0 })
  consecutiveFailures: number = 0;

  @Enum({ items: ['pending', 'active', 'completed', 'cancelled', 'failed', 'stopped'] })
  state: RecurringState = 'pending';

  /**
   * Written by the claim of a renewal, in the claiming transaction: a second instance's claim
   * re-checks the row it locks and passes it by (never two renewals of one period), and a cancel
   * sees whether a charge is already at the processor.
   */
  @Property({ type: 'string', length: 10, nullable: true })
  chargeState: RenewalChargeState | null = null;

  @Property({ type: 'string', length: 100, nullable: true })
  cardToken: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  nextChargeAt: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
