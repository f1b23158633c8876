import { Migration } from '@mikro-orm/migrations';

/**
 * Capture later (docs/capture.md): a payment link and an order say when an approved payment's
 * money is taken (AUTOMATIC, as every existing link and order did, or MANUAL); an order of a
 * MANUAL link is left Authorized (status 6) with the time and amount of its authorization, then
 * captured (Successful) or released (Voided, status 7). Each capture or void is recorded before
 * the processor is called, at most one pending per order, so a capture and a void never both
 * reach the processor, and a call whose answer was lost is settled from the processor's record.
 */
export class Migration20261127050000_capture_later extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "payment_link" add column "capture_method" text check ("capture_method" in ('AUTOMATIC', 'MANUAL')) not null default 'AUTOMATIC';`,
    );
    this.addSql(
      `alter table "checkout_order" add column "capture_method" text check ("capture_method" in ('AUTOMATIC', 'MANUAL')) not null default 'AUTOMATIC', add column "authorized_at" timestamptz(6) null, add column "authorized_amount" numeric(20,4) null;`,
    );
    this.addSql(`alter table "checkout_order" drop constraint "checkout_order_status_known";`);
    this.addSql(`alter table "checkout_order" add constraint "checkout_order_status_known" check ("status_id" >= 1 and "status_id" <= 7);`);
    this.addSql(`create index "checkout_order_status_id_authorized_at_index" on "checkout_order" ("status_id", "authorized_at");`);
    this.addSql(
      `create table "authorization_action" ("id" serial primary key, "order_id" int not null, "kind" varchar(10) not null, "actor" varchar(20) not null, "amount" numeric(20,4) null, "quote" jsonb null, "idempotency_key" varchar(60) not null, "state" varchar(20) not null default 'pending', "response_code" varchar(10) null, "response_message" text null, "created_at" timestamptz(6) not null default now(), "settled_at" timestamptz(6) null);`,
    );
    this.addSql(`create index "authorization_action_order_id_index" on "authorization_action" ("order_id");`);
    this.addSql(`create index "authorization_action_state_created_at_index" on "authorization_action" ("state", "created_at");`);
    this.addSql(`create unique index "authorization_action_one_pending_per_order" on "authorization_action" ("order_id") where "state" = 'pending';`);
    this.addSql(
      `alter table "authorization_action" add constraint "authorization_action_order_id_foreign" foreign key ("order_id") references "checkout_order" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "authorization_action";`);
    this.addSql(`drop index if exists "checkout_order_status_id_authorized_at_index";`);
    this.addSql(`alter table "checkout_order" drop constraint "checkout_order_status_known";`);
    this.addSql(`alter table "checkout_order" add constraint "checkout_order_status_known" check ("status_id" >= 1 and "status_id" <= 5);`);
    this.addSql(`alter table "checkout_order" drop column "capture_method", drop column "authorized_at", drop column "authorized_amount";`);
    this.addSql(`alter table "payment_link" drop column "capture_method";`);
  }
}
