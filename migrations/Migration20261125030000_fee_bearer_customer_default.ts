import { Migration } from '@mikro-orm/migrations';

/**
 * New merchant environments default to the customer bearing the processing fee, as the legacy
 * gateway's samples and its deployed shop plugins assume. Only the column default changes:
 * every existing environment keeps the fee bearer it has (a merchant switches it explicitly,
 * see "Fee bearer" in the README).
 */
export class Migration20261125030000_fee_bearer_customer_default extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "app_environment" alter column "fee_bearer" set default 'customer';`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "app_environment" alter column "fee_bearer" set default 'merchant';`);
  }
}
