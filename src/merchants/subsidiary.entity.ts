import { OptionalProps, Entity, PrimaryKey, Property } from '@mikro-orm/core';

/** A merchant. The legacy interface calls it a subsidiary. */
@Entity({ tableName: 'subsidiary' })
export class Subsidiary {
  [OptionalProps]?: 'customization' | 'paypalEnabled' | 'createdAt' | 'updatedAt' | 'testWebhookSecretSealed';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @Property({ type: 'string', length: 200 })
  name!: string;

  /** ISO 3166-1 alpha-2. */
  @Property({ type: 'string', length: 2, columnType: 'char(2)' })
  country!: string;

  @Property({ type: 'string', length: 320 })
  supportEmail!: string;

  @Property({ type: 'json', nullable: true })
  customization: unknown[] | null = null;

  /** The live environment's Standard Webhooks secret (`whsec_…`), sealed under MASTER_KEY: it must be usable to sign, so it is not hashed. */
  @Property({ type: 'text', lazy: true })
  webhookSecretSealed!: string;

  /** The test environment's signing secret, sealed likewise; null until first needed for a merchant made before each environment had its own. */
  @Property({ type: 'text', lazy: true, nullable: true })
  testWebhookSecretSealed: string | null = null;

  @Property({ type: 'boolean', default: true })
  paypalEnabled: boolean = true;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
