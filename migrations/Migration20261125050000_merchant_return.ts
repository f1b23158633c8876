import { Migration } from '@mikro-orm/migrations';

/**
 * When the customer of a payment attempt was sent back to the merchant's RedirectUrl. Set once,
 * by a conditional update, so the hosted authentication pages send a customer back exactly once
 * and never again redirect anyone who opens the address later. Attempts already finished before
 * this column existed had their customer sent back when they finished: they count as returned.
 */
export class Migration20261125050000_merchant_return extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "order_payment" add column "returned_to_merchant_at" timestamptz(6) null;`);
    this.addSql(`update "order_payment" set "returned_to_merchant_at" = "date_updated" where "status_id" in (4, 5);`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "order_payment" drop column "returned_to_merchant_at";`);
  }
}
