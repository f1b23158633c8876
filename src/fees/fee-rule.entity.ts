import { Index, Check, Entity, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Subsidiary } from '../merchants/subsidiary.entity';

/**
 * Fee for one payment option and currency: `min(amount × rate + flat, cap)`. Rows without a
 * subsidiary are the platform's defaults; a merchant's own row overrides them.
 */
@Check({ name: 'fee_rule_values', expression: '"rate" >= 0 and "rate" < 1 and "flat" >= 0 and ("cap" is null or "cap" >= 0)' })
@Index({
  name: 'fee_rule_default_unique',
  expression: 'create unique index "fee_rule_default_unique" on "fee_rule" ("payment_option", "currency") where "subsidiary_id" is null',
})
@Entity({ tableName: 'fee_rule' })
@Unique({ name: 'fee_rule_scope_unique', properties: ['subsidiary', 'paymentOption', 'currency'] })
export class FeeRule {
  [OptionalProps]?: 'subsidiary' | 'flat' | 'cap';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => Subsidiary, { nullable: true, deleteRule: 'cascade' })
  subsidiary: Subsidiary | null = null;

  @Property({ type: 'string', length: 10 })
  paymentOption!: string;

  @Property({ type: 'string', length: 3, columnType: 'char(3)' })
  currency!: string;

  @Property({ type: 'decimal', precision: 10, scale: 6 })
  rate!: string;

  @Property({ type: 'decimal', precision: 20, scale: 4, default: '0' })
  flat: string = '0';

  @Property({ type: 'decimal', precision: 20, scale: 4, nullable: true })
  cap: string | null = null;
}
