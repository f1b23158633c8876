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
    // An invitation the test key made before this rule, still open, makes a test-only member when
    // accepted: its invitation entry in the audit log names the key's environment. (Members who
    // joined before keep both environments; an operator reviews them in the log: member.invited
    // by API_KEY in environment test.)
    this.addSql(`update "member_invitation" i set "test_only" = true
      where i."accepted_at" is null and exists (
        select 1 from "audit_entry" a
         where a."subsidiary_id" = i."subsidiary_id" and a."action" = 'member.invited' and a."actor_type" = 'API_KEY'
           and a."environment" = 'test' and a."target" = i."email" || ' as ' || i."role"
           and a."at" between i."created_at" - interval '1 minute' and i."created_at" + interval '1 minute');`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "member_invitation" drop column if exists "test_only";`);
    this.addSql(`alter table "merchant_member" drop column if exists "test_only";`);
  }
}
