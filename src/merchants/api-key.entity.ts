import { OptionalProps, Entity, Enum, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { AppEnvironment } from './app-environment.entity';

export type ApiKeyKind = 'public' | 'private';

/**
 * A public or private api-key. Only the SHA-256 of the key is stored (keys are 128 random
 * bits, so a slow hash adds nothing); `hint` keeps the prefix and last four for display.
 */
@Entity({ tableName: 'api_key' })
@Index({ properties: ['environment', 'kind'] })
export class ApiKey {
  [OptionalProps]?: 'createdAt' | 'expiresAt';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade' })
  environment!: AppEnvironment;

  @Enum({ items: ['public', 'private'] })
  kind!: ApiKeyKind;

  @Property({ type: 'string', length: 64, columnType: 'char(64)', unique: true })
  keyHash!: string;

  @Property({ type: 'string', length: 40 })
  hint!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  /** After this instant the key no longer authenticates (set on rotation, possibly in the future for a grace period). */
  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  expiresAt: Date | null = null;
}
