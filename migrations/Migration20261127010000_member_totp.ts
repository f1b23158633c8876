import { Migration } from '@mikro-orm/migrations';

/**
 * A TOTP second factor per member. The secret is sealed under MASTER_KEY (as every stored secret
 * is), both while an enrolment waits for its first code and once it is on; the last accepted
 * time step is kept so that a code is never accepted twice. Recovery codes are stored as
 * SHA-256 hashes only, each used at most once, and go with their member.
 */
export class Migration20261127010000_member_totp extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "merchant_member" add column "totp_secret_sealed" text null;`);
    this.addSql(`alter table "merchant_member" add column "totp_pending_secret_sealed" text null;`);
    this.addSql(`alter table "merchant_member" add column "totp_enabled_at" timestamptz(6) null;`);
    this.addSql(`alter table "merchant_member" add column "totp_last_time_step" bigint null;`);
    this.addSql(`create table "member_recovery_code" (
      "id" serial primary key,
      "member_id" int not null,
      "code_hash" char(64) not null,
      "used_at" timestamptz(6) null,
      "created_at" timestamptz(6) not null default now()
    );`);
    this.addSql(`alter table "member_recovery_code" add constraint "member_recovery_code_member_id_code_hash_unique" unique ("member_id", "code_hash");`);
    this.addSql(
      `alter table "member_recovery_code" add constraint "member_recovery_code_member_id_foreign" foreign key ("member_id") references "merchant_member" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "member_recovery_code";`);
    this.addSql(`alter table "merchant_member"
      drop column if exists "totp_secret_sealed",
      drop column if exists "totp_pending_secret_sealed",
      drop column if exists "totp_enabled_at",
      drop column if exists "totp_last_time_step";`);
  }
}
