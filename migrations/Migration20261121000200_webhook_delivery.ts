import { Migration } from '@mikro-orm/migrations';

/**
 * Webhook delivery: the outbox payload kept as `json` (the exact text, so every attempt sends
 * the same bytes in the documented field order), and an index for reading back the events a
 * lost LISTEN connection missed.
 */
export class Migration20261121000200_webhook_delivery extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "outbox_event" alter column "payload" type json using "payload"::json;`);
    this.addSql(`create index "outbox_event_created_at_index" on "outbox_event" ("created_at");`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop index "outbox_event_created_at_index";`);
    this.addSql(`alter table "outbox_event" alter column "payload" type jsonb using "payload"::jsonb;`);
  }
}
