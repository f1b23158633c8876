import { Check, OptionalProps, Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';
import { OrderPayment } from './order-payment.entity';

/**
 * What is kept of a card: never the full number nor the security code (there are no
 * columns for them), only first six, last four, expiry, type, issuer and a processor token.
 */
@Check({ name: 'card_detail_digits_shape', expression: `"card_first_six_digits" ~ '^[0-9]{6}$' and "card_last_four_digits" ~ '^[0-9]{4}$'` })
@Entity({ tableName: 'card_detail' })
export class CardDetail {
  [OptionalProps]?: 'country' | 'cardToken' | 'dateCreated';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => OrderPayment, { deleteRule: 'cascade', index: true })
  orderPayment!: OrderPayment;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade' })
  environment!: AppEnvironment;

  @Property({ type: 'boolean' })
  status!: boolean;

  @Property({ type: 'string', length: 2, nullable: true })
  country: string | null = null;

  @Property({ type: 'string', length: 100, nullable: true })
  cardToken: string | null = null;

  @Property({ type: 'string', length: 2, columnType: 'char(2)' })
  cardExpiryMonth!: string;

  @Property({ type: 'string', length: 2, columnType: 'char(2)' })
  cardExpiryYear!: string;

  @Property({ type: 'string', length: 30 })
  cardType!: string;

  @Property({ type: 'string', length: 100 })
  cardIssuer!: string;

  @Property({ type: 'string', length: 6, columnType: 'char(6)' })
  cardFirstSixDigits!: string;

  @Property({ type: 'string', length: 4, columnType: 'char(4)' })
  cardLastFourDigits!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  dateCreated: Date = new Date();
}
