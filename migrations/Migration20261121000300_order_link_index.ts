import { Migration } from '@mikro-orm/migrations';

/** Link rules count a link's paid orders under its lock: that count must not scan the orders table. */
export class Migration20261121000300_order_link_index extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index "checkout_order_payment_link_id_status_id_index" on "checkout_order" ("payment_link_id", "status_id");`);
  }
}
