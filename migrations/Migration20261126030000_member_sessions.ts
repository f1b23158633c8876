import { Migration } from '@mikro-orm/migrations';

/**
 * Dashboard sessions of members: a session names the member it was opened for and the role they
 * had then. Removing the member deletes their sessions; a session whose member's role is no
 * longer the one it names no longer works (the member signs in again).
 */
export class Migration20261126030000_member_sessions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "dashboard_session" add column "member_id" int null references "merchant_member" ("id") on delete cascade;`);
    this.addSql(
      `alter table "dashboard_session" add column "member_role" text null check ("member_role" in ('OWNER', 'ADMIN', 'DEVELOPER', 'SUPPORT', 'VIEWER'));`,
    );
    this.addSql(`create index "dashboard_session_member_id_index" on "dashboard_session" ("member_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "dashboard_session_member_id_index";`);
    this.addSql(`alter table "dashboard_session" drop column if exists "member_role", drop column if exists "member_id";`);
  }
}
