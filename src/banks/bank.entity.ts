import { OptionalProps, Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** Seeded reference data: banks of Nigeria with their CBN / NIP codes. */
@Entity({ tableName: 'bank' })
export class Bank {
  [OptionalProps]?: 'isMicrofinance' | 'isMortgage' | 'ussdBankCode' | 'dateUpdated' | 'dateDeleted' | 'updatedBy' | 'deletedBy';

  @PrimaryKey({ type: 'integer', autoincrement: false })
  id!: number;

  @Property({ type: 'string', length: 150 })
  name!: string;

  @Property({ type: 'integer' })
  countryId!: number;

  @Property({ type: 'string', length: 10, unique: true })
  bankCode!: string;

  @Property({ type: 'boolean', nullable: true })
  isMicrofinance: boolean | null = null;

  @Property({ type: 'boolean', nullable: true })
  isMortgage: boolean | null = null;

  @Property({ type: 'string', length: 20, nullable: true })
  ussdBankCode: string | null = null;

  @Property({ type: 'text' })
  logo!: string;

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
