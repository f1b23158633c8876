import { Migration } from '@mikro-orm/migrations';

/**
 * Money and payment integrity:
 * - every order keeps the customer details it was created with (a snapshot), so a later order
 *   or an anonymous payer giving the same e-mail changes nothing an order shows;
 * - one customer per e-mail and environment, enforced by the database (duplicates made by
 *   concurrent creates are merged into the oldest first);
 * - orders created by the hosted payment-link page expire unpaid (`expires_at`);
 * - a payment attempt is recorded before the processor is called (`processing_started_at`),
 *   and the sandbox acquirer remembers each call under the attempt's idempotency key, so an
 *   attempt interrupted by a crash is settled from the processor's own record.
 */
export class Migration20261123100000_payment_integrity extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "checkout_order" add column "customer_email" varchar(320) null, add column "customer_first_name" varchar(100) null, add column "customer_last_name" varchar(100) null, add column "customer_mobile" varchar(40) null, add column "customer_country" char(2) null, add column "expires_at" timestamptz(6) null;`,
    );
    this.addSql(
      `update "checkout_order" o set "customer_email" = c."email", "customer_first_name" = c."first_name", "customer_last_name" = c."last_name", "customer_mobile" = c."mobile", "customer_country" = c."country" from "customer" c where c."id" = o."customer_id";`,
    );
    this.addSql(`create index "checkout_order_status_id_expires_at_index" on "checkout_order" ("status_id", "expires_at");`);

    this.addSql(
      `update "checkout_order" o set "customer_id" = d."keep" from (select "id", min("id") over (partition by "environment_id", "email") as "keep" from "customer") d where o."customer_id" = d."id" and d."id" <> d."keep";`,
    );
    this.addSql(`delete from "customer" c using "customer" k where k."environment_id" = c."environment_id" and k."email" = c."email" and k."id" < c."id";`);
    this.addSql(`drop index "customer_environment_id_email_index";`);
    this.addSql(`alter table "customer" add constraint "customer_environment_id_email_unique" unique ("environment_id", "email");`);

    this.addSql(`alter table "order_payment" add column "processing_started_at" timestamptz(6) null;`);
    this.addSql(`create index "order_payment_status_id_processing_started_at_index" on "order_payment" ("status_id", "processing_started_at");`);

    this.addSql(
      `alter table "sandbox_authorization" add column "idempotency_key" varchar(60) null, add column "result_code" varchar(10) null, add column "result_message" varchar(100) null;`,
    );
    this.addSql(`alter table "sandbox_authorization" add constraint "sandbox_authorization_idempotency_key_unique" unique ("idempotency_key");`);
  }
}
