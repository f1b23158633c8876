import { OptionalProps, Property } from '@mikro-orm/core';

/** The audit columns of the legacy reference tables (banks, link types, frequencies), as the interface prints them. */
export abstract class ReferenceAudit {
  [OptionalProps]?: 'dateUpdated' | 'dateDeleted' | 'updatedBy' | 'deletedBy' | 'isActive' | 'isMicrofinance' | 'isMortgage' | 'ussdBankCode';

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
