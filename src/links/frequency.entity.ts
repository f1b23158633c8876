import { Entity, PrimaryKey, Property } from '@mikro-orm/core';
import { ReferenceAudit } from '../shared/reference-audit';

/** Seeded reference data: charge frequencies of recurring payments (ids 1..11, listed in docs/api.md). */
@Entity({ tableName: 'frequency' })
export class Frequency extends ReferenceAudit {
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
}
