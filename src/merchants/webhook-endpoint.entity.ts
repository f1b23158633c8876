import { OptionalProps, Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { AppEnvironment } from './app-environment.entity';

/** The merchant's webhook URL for one environment (at most one active per environment). */
@Entity({ tableName: 'webhook_endpoint' })
export class WebhookEndpoint {
  [OptionalProps]?: 'isActive' | 'createdAt' | 'updatedAt';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade', unique: true })
  environment!: AppEnvironment;

  @Property({ type: 'text' })
  url!: string;

  @Property({ type: 'boolean', default: true })
  isActive: boolean = true;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
