import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook safety and the master-key check:
 * - each delivery names its destination (the URL's origin), so requests in flight are limited
 *   per receiving server rather than per exact URL;
 * - attempts keep at most 1 KiB of a response body (older rows kept 2 KiB);
 * - `master_key_check` holds one value sealed under MASTER_KEY at first start: a later start
 *   with another key is refused instead of failing on every secret it opens.
 */
export class Migration20261123200000_webhook_safety_master_key_check extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhook_delivery" add column "destination" text null;`);
    // The origin (scheme://host[:port]) of every existing URL, without any user-info part.
    this.addSql(
      `update "webhook_delivery" set "destination" = coalesce(lower(substring("url" from '^([A-Za-z][A-Za-z0-9+.-]*://)')) || lower(substring("url" from '^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?([^/?#]*)')), "url");`,
    );
    this.addSql(`alter table "webhook_delivery" alter column "destination" set not null;`);
    this.addSql(`update "webhook_attempt" set "response_body" = left("response_body", 1024) where length("response_body") > 1024;`);
    this.addSql(
      `create table "master_key_check" ("id" smallint not null default 1, "check_value" text not null, "created_at" timestamptz(6) not null default now(), constraint "master_key_check_pkey" primary key ("id"), constraint "master_key_check_single_row" check ("id" = 1));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "master_key_check";`);
    this.addSql(`alter table "webhook_delivery" drop column "destination";`);
  }
}
