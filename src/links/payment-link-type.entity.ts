import { Entity, PrimaryKey, Property } from '@mikro-orm/core';
import { ReferenceAudit } from '../shared/reference-audit';

/** Seeded reference data: SC (1), MC (2), SUB (5), exactly as docs/api.md lists them. */
@Entity({ tableName: 'payment_link_type' })
export class PaymentLinkType extends ReferenceAudit {
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
}
