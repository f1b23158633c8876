import { Migration } from '@mikro-orm/migrations';

/**
 * Each environment signs its webhooks with its own secret. The secret a merchant already has
 * stays where it is and signs live webhooks from now on; the test environment's secret gets a
 * column of its own (sealed under MASTER_KEY like the other, so this migration cannot make it:
 * the service makes it the first time it is needed) and a table for the secret a rotation
 * replaced while it still signs.
 */
export class Migration20261125010000_webhook_secret_per_environment extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "subsidiary" add column "test_webhook_secret_sealed" text null;`);
    this.addSql(`create table "test_webhook_secret_previous" (
      "subsidiary_id" int primary key references "subsidiary" ("id") on delete cascade,
      "secret_sealed" text not null,
      "expires_at" timestamptz(6) not null
    );`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "test_webhook_secret_previous";`);
    this.addSql(`alter table "subsidiary" drop column if exists "test_webhook_secret_sealed";`);
  }
}
