import { Check, OptionalProps, Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';
import { PaymentLinkType } from './payment-link-type.entity';
import { Frequency } from './frequency.entity';
import { CAPTURE_METHODS, type CaptureMethod } from './capture-method';

export type AuthOption = 'AUTH' | 'NOAUTH';

@Check({ name: 'payment_link_amount_positive', expression: '"amount" is null or "amount" > 0' })
@Check({ name: 'payment_link_limit_positive', expression: '"customer_limit" is null or "customer_limit" > 0' })
@Check({
  name: 'payment_link_subscription_terms',
  expression: '("frequency_id" is null) = ("number_of_payments" is null) and ("number_of_payments" is null or "number_of_payments" > 0)',
})
@Index({ name: 'payment_link_environment_id_date_created_index', properties: ['environment', 'dateCreated'] })
@Entity({ tableName: 'payment_link' })
@Index({ properties: ['environment', 'id'] })
export class PaymentLink {
  [OptionalProps]?:
    | 'description'
    | 'amount'
    | 'authOption'
    | 'captureMethod'
    | 'mobile'
    | 'backgroundImage'
    | 'website'
    | 'logo'
    | 'limit'
    | 'frequency'
    | 'numberOfPayments'
    | 'isActive'
    | 'dateCreated'
    | 'dateUpdated';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade' })
  environment!: AppEnvironment;

  @ManyToOne(() => PaymentLinkType)
  type!: PaymentLinkType;

  @Property({ type: 'string', length: 200 })
  name!: string;

  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  /** Public, unguessable; the last path segment of paymentLinkUrl. */
  @Property({ type: 'string', length: 40, unique: true })
  reference!: string;

  /** null: the customer enters the amount. */
  @Property({ type: 'decimal', precision: 20, scale: 4, nullable: true })
  amount: string | null = null;

  @Property({ type: 'string', length: 3, columnType: 'char(3)' })
  currency!: string;

  @Enum({ items: ['AUTH', 'NOAUTH'] })
  authOption: AuthOption = 'AUTH';

  /** When the money of the link's orders is taken (capture-method.ts): every order on the link takes it. */
  @Enum({ items: [...CAPTURE_METHODS], default: 'AUTOMATIC' })
  captureMethod: CaptureMethod = 'AUTOMATIC';

  @Property({ type: 'string', length: 40, nullable: true })
  mobile: string | null = null;

  @Property({ type: 'text', nullable: true })
  backgroundImage: string | null = null;

  /** Where the customer goes after paying. */
  @Property({ type: 'text', nullable: true })
  website: string | null = null;

  @Property({ type: 'text', nullable: true })
  logo: string | null = null;

  /** Number of paying customers the link accepts; null means no cap. */
  @Property({ type: 'integer', nullable: true, fieldName: 'customer_limit' })
  limit: number | null = null;

  /** A subscription link's terms: how often the card is charged, and how many payments in all. null on other links. */
  @ManyToOne(() => Frequency, { nullable: true })
  frequency: Frequency | null = null;

  @Property({ type: 'integer', nullable: true })
  numberOfPayments: number | null = null;

  @Property({ type: 'boolean' })
  isActive: boolean = true;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  dateCreated: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()', onUpdate: () => new Date() })
  dateUpdated: Date = new Date();
}
