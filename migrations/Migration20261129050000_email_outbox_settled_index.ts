import { Migration } from '@mikro-orm/migrations';

/**
 * Housekeeping deletes the team emails sent or given up longer ago than the retention
 * (EMAIL_OUTBOX_RETENTION_DAYS), oldest first and a bounded batch at a time: this index gives it
 * those rows in that order without reading the table.
 */
export class Migration20261129050000_email_outbox_settled_index extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index "email_outbox_settled_index" on "email_outbox" ((coalesce("sent_at", "failed_at"))) where "sent_at" is not null or "failed_at" is not null;`,
    );
  }

  override async down(): Promise<void> {
    this.addSql(`drop index if exists "email_outbox_settled_index";`);
  }
}
