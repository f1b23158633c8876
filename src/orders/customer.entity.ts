import { OptionalProps, Entity, ManyToOne, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { AppEnvironment } from '../merchants/app-environment.entity';

/**
 * A paying customer of one merchant environment: one per e-mail within it (enforced by the
 * database). Holds the details first given for that e-mail and is never rewritten by a later
 * order or payer; each order keeps its own snapshot of the details it was created with.
 */
@Entity({ tableName: 'customer' })
@Unique({ name: 'customer_environment_id_email_unique', properties: ['environment', 'email'] })
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
