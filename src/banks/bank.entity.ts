import { Entity, PrimaryKey, Property } from '@mikro-orm/core';
import { ReferenceAudit } from '../shared/reference-audit';

/** Seeded reference data: banks of Nigeria with their CBN / NIP codes. */
@Entity({ tableName: 'bank' })
export class Bank extends ReferenceAudit {
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
}
