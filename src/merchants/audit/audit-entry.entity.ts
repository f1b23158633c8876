import { Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Subsidiary } from '../subsidiary.entity';

/** Who made a change: a member of the merchant, an api-key, the platform operator, or the service itself. */
export type AuditActorType = 'MEMBER' | 'API_KEY' | 'ADMIN' | 'SYSTEM';

/**
 * One line of a merchant's audit log: a change made through any interface, or a dashboard
 * sign-in (failed ones too). Append-only: the database refuses to update or delete a row (a
 * trigger, see the migration), so the log cannot be rewritten by the service nor by anyone
 * holding its database role short of dropping the table.
 */
@Entity({ tableName: 'audit_entry' })
// The log is paged newest first per merchant.
@Index({
  name: 'audit_entry_subsidiary_newest_idx',
  expression: 'create index "audit_entry_subsidiary_newest_idx" on "audit_entry" ("subsidiary_id", "at" desc, "id" desc)',
})
export class AuditEntry {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  at!: Date;

  /** The merchant (subsidiary) whose log it is. */
  @ManyToOne(() => Subsidiary)
  subsidiary!: Subsidiary;

  /** `link.created`, `keys.rotated`, `session.signed_in`, … */
  @Property({ type: 'text' })
  action!: string;

  @Enum({ items: ['MEMBER', 'API_KEY', 'ADMIN', 'SYSTEM'], type: 'text' })
  actorType!: AuditActorType;

  /** The member's email, the api-key's hint (never the key), `admin` or `system`. */
  @Property({ type: 'text' })
  actorLabel!: string;

  /** What was changed: a link's id and reference, an order reference, the kinds of keys rotated, … */
  @Property({ type: 'text', nullable: true })
  target: string | null = null;

  /** The address of the request that made the change, when the interface knows it. */
  @Property({ type: 'text', nullable: true })
  ip: string | null = null;

  /** `test` or `live`; null for a change of the whole merchant. */
  @Enum({ items: ['test', 'live'], type: 'text', nullable: true })
  environment: 'test' | 'live' | null = null;
}
