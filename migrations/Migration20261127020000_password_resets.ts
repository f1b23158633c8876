import { Migration } from '@mikro-orm/migrations';

/**
 * Password resets of members: a link (emailed, or made by an owner or admin) whose token is
 * kept only as its SHA-256, valid an hour and used once. Removing the member removes them.
 */
export class Migration20261127020000_password_resets extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "member_password_reset" (
      "id" serial primary key,
      "member_id" int not null,
      "token_hash" char(64) not null,
      "expires_at" timestamptz(6) not null,
      "used_at" timestamptz(6) null,
      "created_at" timestamptz(6) not null default now()
    );`);
    this.addSql(`alter table "member_password_reset" add constraint "member_password_reset_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "member_password_reset_member_id_index" on "member_password_reset" ("member_id");`);
    this.addSql(
      `alter table "member_password_reset" add constraint "member_password_reset_member_id_foreign" foreign key ("member_id") references "merchant_member" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "member_password_reset";`);
  }
}
