import { Migration } from '@mikro-orm/migrations';

/**
 * Lists at scale (docs/performance.md, "Lists at scale"):
 * - keyset pages of orders read an index in (environment_id, created_at, id) order, with or
 *   without a status or payment-method filter, and e-mail / reference-prefix search finds its
 *   rows by index;
 * - the dashboard's figures come from `order_summary` (one row per environment, UTC day,
 *   currency, payment method and status). Writers of orders never update it: a trigger appends
 *   a delta row per insert, status change or delete to `order_summary_delta` (no shared row is
 *   locked on the order create path), and a roll-up folds deltas into the summary.
 */
export class Migration20261124020000_lists_at_scale extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "checkout_order_env_created_id_index" on "checkout_order" ("environment_id", "created_at", "id");`);
    this.addSql(`create index "checkout_order_env_status_created_id_index" on "checkout_order" ("environment_id", "status_id", "created_at", "id");`);
    this.addSql(`create index "checkout_order_env_method_created_id_index" on "checkout_order" ("environment_id", "payment_method", "created_at", "id");`);
    this.addSql(`create index "checkout_order_env_email_created_id_index" on "checkout_order" ("environment_id", "customer_email", "created_at", "id");`);
    this.addSql(`create index "checkout_order_env_reference_prefix_index" on "checkout_order" ("environment_id", "reference" varchar_pattern_ops);`);
    // Superseded by checkout_order_env_created_id_index.
    this.addSql(`drop index if exists "checkout_order_environment_id_created_at_index";`);

    this.addSql(
      `create table "order_summary" ("environment_id" int not null, "day" date not null, "currency" char(3) not null, "payment_method" varchar(20) not null, "status_id" smallint not null, "count" bigint not null, "amount" numeric(30,4) not null, "fees" numeric(30,4) not null, constraint "order_summary_pkey" primary key ("environment_id", "day", "currency", "payment_method", "status_id"));`,
    );
    this.addSql(
      `create table "order_summary_delta" ("id" bigserial primary key, "environment_id" int not null, "day" date not null, "currency" char(3) not null, "payment_method" varchar(20) not null, "status_id" smallint not null, "count" int not null, "amount" numeric(20,4) not null, "fees" numeric(20,4) not null);`,
    );
    this.addSql(`create index "order_summary_delta_environment_id_day_index" on "order_summary_delta" ("environment_id", "day");`);
    this.addSql(
      `alter table "order_summary" add constraint "order_summary_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "order_summary_delta" add constraint "order_summary_delta_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(`create or replace function "order_summary_track"() returns trigger language plpgsql as $$
begin
  if tg_op = 'UPDATE' or tg_op = 'DELETE' then
    insert into "order_summary_delta" ("environment_id", "day", "currency", "payment_method", "status_id", "count", "amount", "fees")
    values (old."environment_id", (old."created_at" at time zone 'UTC')::date, old."currency", coalesce(old."payment_method", ''), old."status_id", -1, -old."amount", -old."fee");
  end if;
  if tg_op = 'UPDATE' or tg_op = 'INSERT' then
    insert into "order_summary_delta" ("environment_id", "day", "currency", "payment_method", "status_id", "count", "amount", "fees")
    values (new."environment_id", (new."created_at" at time zone 'UTC')::date, new."currency", coalesce(new."payment_method", ''), new."status_id", 1, new."amount", new."fee");
  end if;
  return null;
end $$;`);
    this.addSql(
      `create trigger "order_summary_track_insert_delete" after insert or delete on "checkout_order" for each row execute function "order_summary_track"();`,
    );
    this.addSql(
      `create trigger "order_summary_track_update" after update on "checkout_order" for each row when (old."status_id" is distinct from new."status_id" or old."payment_method" is distinct from new."payment_method" or old."amount" is distinct from new."amount" or old."fee" is distinct from new."fee" or old."currency" is distinct from new."currency" or old."created_at" is distinct from new."created_at" or old."environment_id" is distinct from new."environment_id") execute function "order_summary_track"();`,
    );
    // The orders that exist already.
    this.addSql(
      `insert into "order_summary" ("environment_id", "day", "currency", "payment_method", "status_id", "count", "amount", "fees")
       select "environment_id", ("created_at" at time zone 'UTC')::date, "currency", coalesce("payment_method", ''), "status_id", count(*), sum("amount"), sum("fee")
         from "checkout_order" group by 1, 2, 3, 4, 5;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "order_summary_track_update" on "checkout_order";`);
    this.addSql(`drop trigger if exists "order_summary_track_insert_delete" on "checkout_order";`);
    this.addSql(`drop function if exists "order_summary_track"();`);
    this.addSql(`drop table if exists "order_summary_delta";`);
    this.addSql(`drop table if exists "order_summary";`);
    this.addSql(`create index "checkout_order_environment_id_created_at_index" on "checkout_order" ("environment_id", "created_at");`);
    for (const name of ['env_created_id', 'env_status_created_id', 'env_method_created_id', 'env_email_created_id', 'env_reference_prefix']) {
      this.addSql(`drop index if exists "checkout_order_${name}_index";`);
    }
  }
}
