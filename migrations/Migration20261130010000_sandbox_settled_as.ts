import { Migration } from '@mikro-orm/migrations';

/**
 * The sandbox acquirer marks an approved authorization captured or voided once, as a real
 * acquirer does: a later capture or void of it, under any key, is declined.
 */
export class Migration20261130010000_sandbox_settled_as extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "sandbox_authorization" add column "settled_as" varchar(10) null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "sandbox_authorization" drop column if exists "settled_as";`);
  }
}
