import { OptionalProps, Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** Seeded reference data: SC (1), MC (2), SUB (5), exactly as the specification's table. */
@Entity({ tableName: 'payment_link_type' })
export class PaymentLinkType {
  [OptionalProps]?: 'dateUpdated' | 'dateDeleted' | 'updatedBy' | 'deletedBy';

  @PrimaryKey({ type: 'integer', autoincrement: false })
  id!: number;

  @Property({ type: 'string', length: 10, unique: true })
  code!: string;

  @Property({ type: 'string', length: 100 })
  paymentLinkName!: string;

  @Property({ type: 'string', length: 300 })
  description!: string;

  @Property({ type: 'boolean' })
  status!: boolean;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)' })
  dateCreated!: Date;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  dateUpdated: Date | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  dateDeleted: Date | null = null;

  @Property({ type: 'integer' })
  createdBy!: number;

  @Property({ type: 'integer', nullable: true })
  updatedBy: number | null = null;

  @Property({ type: 'integer', nullable: true })
  deletedBy: number | null = null;
}
