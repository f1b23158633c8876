import { Migration } from '@mikro-orm/migrations';

/**
 * Disputes (chargebacks) of paid orders: one row per dispute the processor reported, with the
 * merchant's answer and when the processor took it (the partial indexes feed the dispute job:
 * deadlines passing, answers to send again). The sandbox acquirer gets its own dispute table and
 * remembers, per authorization, what was paid (amount, currency, order) and whether the
 * cardholder disputes it (the test card 4000000000000259 does). Existing rows get nulls: no
 * dispute is ever filed for them.
 */
export class Migration20261127060000_disputes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "dispute" (
      "id" uuid not null,
      "order_id" int not null,
      "environment_id" int not null,
      "amount" numeric(20,4) not null,
      "currency" char(3) not null,
      "reason" varchar(100) not null,
      "status" text check ("status" in ('NEEDS_RESPONSE', 'UNDER_REVIEW', 'WON', 'LOST', 'ACCEPTED')) not null,
      "evidence_due_by" timestamptz(6) not null,
      "evidence" text null,
      "answered_at" timestamptz(6) null,
      "answer_sent_at" timestamptz(6) null,
      "decided_at" timestamptz(6) null,
      "processor_reference" varchar(60) not null,
      "created_at" timestamptz(6) not null default now(),
      "updated_at" timestamptz(6) not null default now(),
      constraint "dispute_pkey" primary key ("id"),
      constraint "dispute_amount_positive" check ("amount" > 0)
    );`);
    this.addSql(
      `alter table "dispute" add constraint "dispute_order_id_foreign" foreign key ("order_id") references "checkout_order" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "dispute" add constraint "dispute_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`alter table "dispute" add constraint "dispute_processor_reference_unique" unique ("processor_reference");`);
    this.addSql(`create index "dispute_order_id_created_at_index" on "dispute" ("order_id", "created_at");`);
    this.addSql(`create index "dispute_env_created_id_index" on "dispute" ("environment_id", "created_at", "id");`);
    this.addSql(`create index "dispute_env_status_created_id_index" on "dispute" ("environment_id", "status", "created_at", "id");`);
    this.addSql(`create index "dispute_needs_response_due_index" on "dispute" ("evidence_due_by") where "status" = 'NEEDS_RESPONSE';`);
    this.addSql(`create index "dispute_answer_unsent_index" on "dispute" ("answered_at") where "answered_at" is not null and "answer_sent_at" is null;`);

    this.addSql(`alter table "sandbox_authorization" add column "amount" numeric(20,4) null, add column "currency" char(3) null,
      add column "order_reference" varchar(40) null, add column "dispute_reason" varchar(100) null;`);
    this.addSql(`create table "sandbox_dispute" (
      "token" varchar(60) not null,
      "payment_token" varchar(60) not null,
      "order_reference" varchar(40) not null,
      "amount" numeric(20,4) not null,
      "currency" char(3) not null,
      "reason" varchar(100) not null,
      "state" varchar(20) not null default 'needs_response',
      "evidence_due_by" timestamptz(6) not null,
      "evidence" text null,
      "answer_key" varchar(60) null,
      "acknowledged" varchar(20) null,
      "created_at" timestamptz(6) not null default now(),
      constraint "sandbox_dispute_pkey" primary key ("token")
    );`);
    this.addSql(`alter table "sandbox_dispute" add constraint "sandbox_dispute_payment_token_unique" unique ("payment_token");`);
    this.addSql(`create index "sandbox_dispute_unacknowledged_index" on "sandbox_dispute" ("created_at") where "acknowledged" is distinct from "state";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "sandbox_dispute";`);
    this.addSql(`alter table "sandbox_authorization" drop column if exists "amount", drop column if exists "currency",
      drop column if exists "order_reference", drop column if exists "dispute_reason";`);
    this.addSql(`drop table if exists "dispute";`);
  }
}
