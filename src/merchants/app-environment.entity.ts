import { OptionalProps, Entity, Enum, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Subsidiary } from './subsidiary.entity';

export type EnvironmentMode = 'test' | 'live';
export type FeeBearer = 'merchant' | 'customer';

/**
 * One of a merchant's two environments. Every tenant-owned row points at an environment,
 * so the pair (merchant, test|live) that an api-key selects is a single foreign key.
 */
@Entity({ tableName: 'app_environment' })
@Unique({ properties: ['subsidiary', 'mode'] })
export class AppEnvironment {
  [OptionalProps]?: 'feeBearer' | 'createdAt';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => Subsidiary, { deleteRule: 'cascade' })
  subsidiary!: Subsidiary;

  @Enum({ items: ['test', 'live'] })
  mode!: EnvironmentMode;

  /** Who bears the processing fee by default. */
  @Enum({ items: ['merchant', 'customer'], default: 'merchant' })
  feeBearer: FeeBearer = 'merchant';

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
