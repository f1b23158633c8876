import { OptionalProps, Entity, Enum, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Subsidiary } from './subsidiary.entity';

export type EnvironmentMode = 'test' | 'live';
export type FeeBearer = 'merchant' | 'customer';

/**
 * Who bears the processing fee when a merchant is made without saying: the customer, as the
 * legacy gateway's samples and deployed shop plugins assume (`totalAmountCharged - fee` is the
 * order amount). Environments made before this default keep what they had.
 */
export const DEFAULT_FEE_BEARER: FeeBearer = 'customer';

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

  /** Who bears the processing fee of this environment's orders. */
  @Enum({ items: ['merchant', 'customer'], default: DEFAULT_FEE_BEARER })
  feeBearer: FeeBearer = DEFAULT_FEE_BEARER;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
