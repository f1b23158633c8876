import { Migration } from '@mikro-orm/migrations';

/**
 * No api-key signs in to the dashboard any more: every session is a member's. Sessions opened
 * with a private key end here, the table that tied them to their keys goes, and a session now
 * always names its member and the role it was opened with.
 */
export class Migration20261127030000_member_only_sessions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`delete from "dashboard_session" where "member_id" is null or "member_role" is null;`);
    this.addSql(`drop table if exists "dashboard_session_key";`);
    this.addSql(`alter table "dashboard_session" alter column "member_id" set not null, alter column "member_role" set not null;`);
  }

  override async down(): Promise<void> {
    this.addSql(`alter table "dashboard_session" alter column "member_id" drop not null, alter column "member_role" drop not null;`);
    this.addSql(`create table "dashboard_session_key" (
      "session_id" bigint not null references "dashboard_session" ("id") on delete cascade,
      "environment_id" int not null references "app_environment" ("id") on delete cascade,
      "api_key_id" int not null references "api_key" ("id") on delete cascade,
      primary key ("session_id", "environment_id")
    );`);
    this.addSql(`create index "dashboard_session_key_api_key_id_index" on "dashboard_session_key" ("api_key_id");`);
  }
}
