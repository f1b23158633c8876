import { Migration } from '@mikro-orm/migrations';

/**
 * A subscription link carries its terms: how often the card is charged (`frequency_id`) and how
 * many payments in all (`number_of_payments`); existing subscription links get the defaults
 * (monthly, 12 payments), every other link none. A subscription the link's rules stop is
 * `stopped`.
 */
export class Migration20261125020000_subscription_link_terms extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "payment_link" add column "frequency_id" int null, add column "number_of_payments" int null;`);
    this.addSql(
      `alter table "payment_link" add constraint "payment_link_frequency_id_foreign" foreign key ("frequency_id") references "frequency" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `update "payment_link" set "frequency_id" = 6, "number_of_payments" = 12 where "type_id" = (select "id" from "payment_link_type" where "code" = 'SUB');`,
    );
    this.addSql(
      `alter table "payment_link" add constraint "payment_link_subscription_terms" check (("frequency_id" is null) = ("number_of_payments" is null) and ("number_of_payments" is null or "number_of_payments" > 0));`,
    );
    this.addSql(`alter table "recurring_payment" drop constraint if exists "recurring_payment_state_check";`);
    this.addSql(
      `alter table "recurring_payment" add constraint "recurring_payment_state_check" check ("state" in ('pending', 'active', 'completed', 'cancelled', 'failed', 'stopped'));`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`update "recurring_payment" set "state" = 'cancelled' where "state" = 'stopped';`);
    this.addSql(`alter table "recurring_payment" drop constraint if exists "recurring_payment_state_check";`);
    this.addSql(
      `alter table "recurring_payment" add constraint "recurring_payment_state_check" check ("state" in ('pending', 'active', 'completed', 'cancelled', 'failed'));`,
    );
    this.addSql(`alter table "payment_link" drop constraint if exists "payment_link_subscription_terms";`);
    this.addSql(`alter table "payment_link" drop constraint if exists "payment_link_frequency_id_foreign";`);
    this.addSql(`alter table "payment_link" drop column if exists "frequency_id", drop column if exists "number_of_payments";`);
  }
}
