import { Migration } from '@mikro-orm/migrations';

/**
 * Refunds of paid orders: one row per refund, PENDING until the processor answers (the partial
 * index feeds the reconciliation of refunds a crash left with the processor), an idempotency key
 * unique per environment. The sandbox remembers, per authorization, whether its issuer declines
 * refunds (the test card 4000000000005126 does).
 */
export class Migration20261127040000_refunds extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "refund" (
      "id" uuid not null,
      "order_id" int not null,
      "environment_id" int not null,
      "amount" numeric(20,4) not null,
      "currency" char(3) not null,
      "status" text check ("status" in ('PENDING', 'SUCCEEDED', 'FAILED')) not null,
      "reason" text null,
      "failure_reason" text null,
      "idempotency_key" varchar(255) null,
      "requested_amount" numeric(20,4) null,
      "processor_reference" varchar(60) null,
      "created_at" timestamptz(6) not null default now(),
      "updated_at" timestamptz(6) not null default now(),
      constraint "refund_pkey" primary key ("id"),
      constraint "refund_amount_positive" check ("amount" > 0)
    );`);
    this.addSql(
      `alter table "refund" add constraint "refund_order_id_foreign" foreign key ("order_id") references "checkout_order" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "refund" add constraint "refund_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`alter table "refund" add constraint "refund_environment_idempotency_key_unique" unique ("environment_id", "idempotency_key");`);
    this.addSql(`create index "refund_order_id_created_at_index" on "refund" ("order_id", "created_at");`);
    this.addSql(`create index "refund_pending_index" on "refund" ("created_at") where "status" = 'PENDING';`);
    this.addSql(`alter table "sandbox_authorization" add column "refund_decline" varchar(100) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "sandbox_authorization" drop column if exists "refund_decline";`);
    this.addSql(`drop table if exists "refund";`);
  }
}
