import { Migration } from '@mikro-orm/migrations';

/** Fee rules (platform defaults and per-merchant overrides), stored Idempotency-Key answers, the sandbox acquirer's authorizations. */
export class Migration20261121000100_fees_idempotency_sandbox extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "fee_rule" ("id" serial primary key, "subsidiary_id" int null, "payment_option" varchar(10) not null, "currency" char(3) not null, "rate" numeric(10,6) not null, "flat" numeric(20,4) not null default '0', "cap" numeric(20,4) null);`,
    );
    this.addSql(`alter table "fee_rule" add constraint "fee_rule_scope_unique" unique ("subsidiary_id", "payment_option", "currency");`);
    this.addSql(
      `alter table "fee_rule" add constraint "fee_rule_subsidiary_id_foreign" foreign key ("subsidiary_id") references "subsidiary" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "fee_rule" add constraint "fee_rule_values" check ("rate" >= 0 and "rate" < 1 and "flat" >= 0 and ("cap" is null or "cap" >= 0));`,
    );
    // One default per option and currency: the unique constraint above treats NULL subsidiaries as distinct.
    this.addSql(`create unique index "fee_rule_default_unique" on "fee_rule" ("payment_option", "currency") where "subsidiary_id" is null;`);

    this.addSql(
      `create table "idempotency_key" ("id" bigserial primary key, "environment_id" int not null, "key" varchar(255) not null, "fingerprint" char(64) not null, "state" text check ("state" in ('in_progress', 'completed')) not null default 'in_progress', "response_status" smallint null, "response_body" text null, "created_at" timestamptz(6) not null default now());`,
    );
    this.addSql(`create index "idempotency_key_created_at_index" on "idempotency_key" ("created_at");`);
    this.addSql(`alter table "idempotency_key" add constraint "idempotency_key_scope_unique" unique ("environment_id", "key");`);
    this.addSql(
      `alter table "idempotency_key" add constraint "idempotency_key_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );

    this.addSql(
      `create table "sandbox_authorization" ("token" varchar(60) not null, "kind" varchar(10) not null, "outcome_code" varchar(10) not null, "outcome_message" varchar(100) not null, "issuer" varchar(100) not null, "state" varchar(20) not null default 'pending', "created_at" timestamptz(6) not null default now(), constraint "sandbox_authorization_pkey" primary key ("token"));`,
    );

    // Platform default fees: local cards 1.5% capped at 2,000 NGN; international cards 3.9%; PayPal 4.4% + a fixed part.
    this.addSql(`insert into "fee_rule" ("subsidiary_id", "payment_option", "currency", "rate", "flat", "cap") values
      (null, 'C', 'NGN', 0.015, 0, 2000),
      (null, 'C', 'GHS', 0.0195, 0, null),
      (null, 'C', 'KES', 0.029, 0, null),
      (null, 'C', 'ZAR', 0.029, 0, null),
      (null, 'C', 'USD', 0.039, 0, null),
      (null, 'C', 'GBP', 0.039, 0, null),
      (null, 'C', 'EUR', 0.039, 0, null),
      (null, 'PAYPAL', 'NGN', 0.044, 100, null),
      (null, 'PAYPAL', 'USD', 0.044, 0.30, null),
      (null, 'PAYPAL', 'GBP', 0.044, 0.20, null),
      (null, 'PAYPAL', 'EUR', 0.044, 0.35, null),
      (null, 'PAYPAL', 'GHS', 0.044, 3, null),
      (null, 'PAYPAL', 'KES', 0.044, 30, null),
      (null, 'PAYPAL', 'ZAR', 0.044, 5, null);`);
  }
}
