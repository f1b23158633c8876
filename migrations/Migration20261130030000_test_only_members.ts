import { Migration } from '@mikro-orm/migrations';

/**
 * A member invited with a test-mode credential (a test private key, or a member who works in test
 * only) works in the test environment only: a test key, usually in more hands than the live one,
 * cannot make anyone who reaches live money. Existing members keep both environments.
 */
export class Migration20261130030000_test_only_members extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "merchant_member" add column "test_only" boolean not null default false;`);
    this.addSql(`alter table "member_invitation" add column "test_only" boolean not null default false;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "member_invitation" drop column if exists "test_only";`);
    this.addSql(`alter table "merchant_member" drop column if exists "test_only";`);
  }
}
