import { Migration } from '@mikro-orm/migrations';

/**
 * The merchant's idempotency key of captureOrder and voidOrder (docs/capture.md): kept on the
 * capture or void it asked for, unique per environment, with the amount as asked, so a retry of
 * the key answers that capture or void (or is refused when it asks for something else). The
 * environment is copied from the order onto existing rows.
 */
export class Migration20261128060000_capture_idempotency_key extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "authorization_action" add column "environment_id" int null, add column "merchant_key" varchar(255) null, add column "requested_amount" numeric(20,4) null;`,
    );
    this.addSql(`update "authorization_action" a set "environment_id" = o."environment_id" from "checkout_order" o where o."id" = a."order_id";`);
    this.addSql(
      `alter table "authorization_action" add constraint "authorization_action_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "authorization_action" add constraint "authorization_action_environment_merchant_key_unique" unique ("environment_id", "merchant_key");`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "authorization_action" drop constraint if exists "authorization_action_environment_merchant_key_unique";`);
    this.addSql(`alter table "authorization_action" drop constraint if exists "authorization_action_environment_id_foreign";`);
    this.addSql(`alter table "authorization_action" drop column "environment_id", drop column "merchant_key", drop column "requested_amount";`);
  }
}
