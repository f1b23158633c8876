import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook signing-secret rotation with an overlap: the secret a rotation replaced, still sealed
 * as it was, and until when deliveries are signed with it as well as with the new one.
 */
export class Migration20261124080100_webhook_secret_rotation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "webhook_secret_previous" (
      "subsidiary_id" int primary key references "subsidiary" ("id") on delete cascade,
      "secret_sealed" text not null,
      "expires_at" timestamptz(6) not null
    );`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "webhook_secret_previous";`);
  }
}
