import { Migration } from '@mikro-orm/migrations';

/**
 * A merchant's team. Members sign in as themselves with a role; an email is unique per merchant
 * whatever its case. Invitations keep only the SHA-256 of their token, and are used once.
 */
export class Migration20261126020000_members extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "merchant_member" (
      "id" serial primary key,
      "subsidiary_id" int not null,
      "email" text not null,
      "password_hash" text not null,
      "role" text check ("role" in ('OWNER', 'ADMIN', 'DEVELOPER', 'SUPPORT', 'VIEWER')) not null,
      "created_at" timestamptz(6) not null default now()
    );`);
    this.addSql(`create unique index "merchant_member_subsidiary_email_unique" on "merchant_member" ("subsidiary_id", lower("email"));`);
    this.addSql(
      `alter table "merchant_member" add constraint "merchant_member_subsidiary_id_foreign" foreign key ("subsidiary_id") references "subsidiary" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(`create table "member_invitation" (
      "id" serial primary key,
      "subsidiary_id" int not null,
      "email" text not null,
      "role" text check ("role" in ('OWNER', 'ADMIN', 'DEVELOPER', 'SUPPORT', 'VIEWER')) not null,
      "token_hash" char(64) not null,
      "expires_at" timestamptz(6) not null,
      "accepted_at" timestamptz(6) null,
      "created_at" timestamptz(6) not null default now()
    );`);
    this.addSql(`alter table "member_invitation" add constraint "member_invitation_token_hash_unique" unique ("token_hash");`);
    this.addSql(`create index "member_invitation_subsidiary_email_index" on "member_invitation" ("subsidiary_id", lower("email"));`);
    this.addSql(
      `alter table "member_invitation" add constraint "member_invitation_subsidiary_id_foreign" foreign key ("subsidiary_id") references "subsidiary" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "member_invitation";`);
    this.addSql(`drop table if exists "merchant_member";`);
  }
}
