import { OptionalProps, Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** Seeded reference data: charge frequencies of recurring payments (ids 1..11 of the specification). */
@Entity({ tableName: 'frequency' })
export class Frequency {
  [OptionalProps]?: 'isActive' | 'dateUpdated' | 'dateDeleted' | 'updatedBy' | 'deletedBy';

  @PrimaryKey({ type: 'integer', autoincrement: false })
  id!: number;

  @Property({ type: 'string', length: 50 })
  name!: string;

  @Property({ type: 'string', length: 200 })
  description!: string;

  @Property({ type: 'integer' })
  hours!: number;

  @Property({ type: 'integer' })
  days!: number;

  @Property({ type: 'boolean', nullable: true })
  isActive: boolean | null = true;

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
