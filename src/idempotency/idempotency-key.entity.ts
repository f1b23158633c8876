import { Entity, Enum, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';

/** A stored answer to a request that carried an Idempotency-Key, scoped to the merchant environment. */
@Entity({ tableName: 'idempotency_key' })
@Unique({ name: 'idempotency_key_scope_unique', properties: ['environment', 'key'] })
export class IdempotencyKey {
  [OptionalProps]?: 'state' | 'responseStatus' | 'responseBody' | 'createdAt';

  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade' })
  environment!: AppEnvironment;

  @Property({ type: 'string', length: 255 })
  key!: string;

  /** HMAC-SHA256 (key derived from MASTER_KEY) of method, matched route, params and the request's whole content. */
  @Property({ type: 'string', length: 64, columnType: 'char(64)' })
  fingerprint!: string;

  @Enum({ items: ['in_progress', 'completed'] })
  state: 'in_progress' | 'completed' = 'in_progress';

  @Property({ type: 'smallint', nullable: true })
  responseStatus: number | null = null;

  @Property({ type: 'text', nullable: true })
  responseBody: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()', index: true })
  createdAt: Date = new Date();
}
