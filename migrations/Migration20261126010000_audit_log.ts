import { Migration } from '@mikro-orm/migrations';

/**
 * The audit log of every merchant: one row per change or sign-in, read newest first per merchant
 * (the index). Rows are never changed nor deleted: a trigger refuses UPDATE and DELETE, and
 * another TRUNCATE, whoever asks (the service's own role included). Entries keep their merchant:
 * a merchant with entries cannot be deleted either (no cascade).
 */
export class Migration20261126010000_audit_log extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "audit_entry" (
      "id" bigserial primary key,
      "at" timestamptz(6) not null default now(),
      "subsidiary_id" int not null,
      "action" text not null,
      "actor_type" text not null check ("actor_type" in ('MEMBER', 'API_KEY', 'ADMIN', 'SYSTEM')),
      "actor_label" text not null,
      "target" text null,
      "ip" text null,
      "environment" text null check ("environment" in ('test', 'live'))
    );`);
    this.addSql(
      `alter table "audit_entry" add constraint "audit_entry_subsidiary_id_foreign" foreign key ("subsidiary_id") references "subsidiary" ("id") on update cascade;`,
    );
    this.addSql(`create index "audit_entry_subsidiary_newest_idx" on "audit_entry" ("subsidiary_id", "at" desc, "id" desc);`);
    this.addSql(`create or replace function "pgw_audit_entry_append_only"() returns trigger language plpgsql as $$
      begin
        raise exception 'audit entries are append-only: % is refused', tg_op using errcode = 'insufficient_privilege';
      end $$;`);
    this.addSql(
      `create trigger "audit_entry_append_only" before update or delete on "audit_entry" for each row execute function "pgw_audit_entry_append_only"();`,
    );
    this.addSql(
      `create trigger "audit_entry_no_truncate" before truncate on "audit_entry" for each statement execute function "pgw_audit_entry_append_only"();`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "audit_entry";`);
    this.addSql(`drop function if exists "pgw_audit_entry_append_only"();`);
  }
}
