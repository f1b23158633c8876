import { OptionalProps, Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';

/** A paying customer of one merchant environment, keyed by e-mail within it. */
@Entity({ tableName: 'customer' })
@Index({ properties: ['environment', 'email'] })
export class Customer {
  [OptionalProps]?: 'isBlacklisted' | 'reasonBlacklisted' | 'dateCreated' | 'dateUpdated';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade' })
  environment!: AppEnvironment;

  @Property({ type: 'string', length: 320 })
  email!: string;

  @Property({ type: 'string', length: 100 })
  firstName!: string;

  @Property({ type: 'string', length: 100 })
  lastName!: string;

  @Property({ type: 'string', length: 40 })
  mobile!: string;

  @Property({ type: 'string', length: 2, columnType: 'char(2)' })
  country!: string;

  @Property({ type: 'boolean', default: false })
  isBlacklisted: boolean = false;

  @Property({ type: 'text', nullable: true })
  reasonBlacklisted: string | null = null;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  dateCreated: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()', onUpdate: () => new Date() })
  dateUpdated: Date = new Date();
}
