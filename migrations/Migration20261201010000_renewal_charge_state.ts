import { Migration } from '@mikro-orm/migrations';

/**
 * A subscription's renewal in flight is marked on the subscription's row (`charge_state`:
 * `claimed` when its order is recorded, `charging` once sent to the processor, null when settled).
 * The claim writes the row it claims, so a second instance's claim re-checks it and passes it by.
 * A renewal still Processing when this runs may already be at the processor: it is `charging`.
 */
export class Migration20261201010000_renewal_charge_state extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "recurring_payment" add column "charge_state" varchar(10) null;`);
    this.addSql(`update "recurring_payment" r set "charge_state" = 'charging'
      where exists (select 1 from "checkout_order" o where o."recurring_payment_id" = r."id" and o."id" <> r."order_id" and o."status_id" = 3);`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "recurring_payment" drop column if exists "charge_state";`);
  }
}
