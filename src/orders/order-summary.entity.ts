import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';

/**
 * The dashboard's figures: orders of one environment created on one UTC day, by currency,
 * payment method ('' before any payment attempt) and status. Maintained from
 * `OrderSummaryDelta` rows by a roll-up, never by the writers of orders (docs/performance.md).
 */
@Entity({ tableName: 'order_summary' })
export class OrderSummary {
  @ManyToOne(() => AppEnvironment, { primary: true, deleteRule: 'cascade' })
  environment!: AppEnvironment;

  @PrimaryKey({ type: 'date' })
  day!: string;

  @PrimaryKey({ type: 'string', length: 3, columnType: 'char(3)' })
  currency!: string;

  @PrimaryKey({ type: 'string', length: 20 })
  paymentMethod!: string;

  @PrimaryKey({ type: 'smallint' })
  statusId!: number;

  @Property({ type: 'bigint' })
  count!: string;

  @Property({ type: 'decimal', precision: 30, scale: 4 })
  amount!: string;

  @Property({ type: 'decimal', precision: 30, scale: 4 })
  fees!: string;
}

/**
 * One change to the summary, appended by a trigger of `checkout_order` for each insert, delete
 * and change of status, payment method, amount, fee or currency (-1 for the old values, +1 for
 * the new): appending locks no shared row, so concurrent order creates never wait on each other.
 */
@Entity({ tableName: 'order_summary_delta' })
@Index({ name: 'order_summary_delta_environment_id_day_index', properties: ['environment', 'day'] })
export class OrderSummaryDelta {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade' })
  environment!: AppEnvironment;

  @Property({ type: 'date' })
  day!: string;

  @Property({ type: 'string', length: 3, columnType: 'char(3)' })
  currency!: string;

  @Property({ type: 'string', length: 20 })
  paymentMethod!: string;

  @Property({ type: 'smallint' })
  statusId!: number;

  @Property({ type: 'integer' })
  count!: number;

  @Property({ type: 'decimal', precision: 20, scale: 4 })
  amount!: string;

  @Property({ type: 'decimal', precision: 20, scale: 4 })
  fees!: string;
}
