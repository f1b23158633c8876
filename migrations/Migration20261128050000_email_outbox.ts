import { Migration } from '@mikro-orm/migrations';

/**
 * The team's emails (invitations, password resets), written in the transaction that makes the
 * link they announce and sent afterwards by the email sender, which leases due rows (FOR UPDATE
 * SKIP LOCKED), retries with backoff and gives up after a bound. The body holds the link: it is
 * sealed under the master key (`body_sealed`) and cleared once the email is sent or given up.
 */
export class Migration20261128050000_email_outbox extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table "email_outbox" (
      "id" bigserial primary key,
      "kind" varchar(32) not null,
      "subsidiary_id" int null,
      "environment_id" int null,
      "recipient" varchar(320) not null,
      "subject" text not null,
      "body_sealed" text null,
      "attempts" int not null default 0,
      "next_attempt_at" timestamptz(6) not null default now(),
      "lease_until" timestamptz(6) null,
      "sent_at" timestamptz(6) null,
      "failed_at" timestamptz(6) null,
      "last_error" text null,
      "created_at" timestamptz(6) not null default now()
    );`);
    this.addSql(`create index "email_outbox_due_index" on "email_outbox" ("next_attempt_at", "id") where "sent_at" is null and "failed_at" is null;`);
    this.addSql(`create index "email_outbox_subsidiary_id_index" on "email_outbox" ("subsidiary_id");`);
    this.addSql(
      `alter table "email_outbox" add constraint "email_outbox_subsidiary_id_foreign" foreign key ("subsidiary_id") references "subsidiary" ("id") on update cascade on delete cascade;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop table if exists "email_outbox";`);
  }
}
