import { Migration } from '@mikro-orm/migrations';

/**
 * Dashboard sign-in sessions. The cookie holds a random token; only its SHA-256 is stored, so
 * a copy of the table signs nobody in. A session names, per environment, the private key it
 * was opened with: when that key expires (rotation, after its grace) the session no longer
 * reaches that environment. Stored in the database so every instance honours it.
 */
export class Migration20261124080000_dashboard_session extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "dashboard_session" (
      "id" bigserial primary key,
      "token_hash" char(64) not null unique,
      "subsidiary_id" int not null references "subsidiary" ("id") on delete cascade,
      "created_at" timestamptz(6) not null default now(),
      "expires_at" timestamptz(6) not null
    );`);
    this.addSql(`create index "dashboard_session_expires_at_index" on "dashboard_session" ("expires_at");`);
    this.addSql(`create table "dashboard_session_key" (
      "session_id" bigint not null references "dashboard_session" ("id") on delete cascade,
      "environment_id" int not null references "app_environment" ("id") on delete cascade,
      "api_key_id" int not null references "api_key" ("id") on delete cascade,
      primary key ("session_id", "environment_id")
    );`);
    this.addSql(`create index "dashboard_session_key_api_key_id_index" on "dashboard_session_key" ("api_key_id");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "dashboard_session_key";`);
    this.addSql(`drop table if exists "dashboard_session";`);
  }
}
