import { OptionalProps, Entity, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { AppEnvironment } from './app-environment.entity';

/** An RSA key pair for payload encryption: the public half as merchants see it, the private half sealed under MASTER_KEY. */
@Entity({ tableName: 'encryption_key' })
export class EncryptionKey {
  [OptionalProps]?: 'createdAt' | 'expiresAt';

  @PrimaryKey({ type: 'integer', autoincrement: true })
  id!: number;

  @ManyToOne(() => AppEnvironment, { deleteRule: 'cascade', index: true })
  environment!: AppEnvironment;

  @Property({ type: 'integer' })
  bits!: number;

  /** base64 of `"<bits>!<RSAKeyValue>…"`, exactly what merchants are given. */
  @Property({ type: 'text' })
  encryptionKey!: string;

  @Property({ type: 'text', lazy: true })
  privateKeySealed!: string;

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', nullable: true })
  expiresAt: Date | null = null;
}
