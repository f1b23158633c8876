import { Migration } from '@mikro-orm/migrations';

/**
 * REST links/all answers each link as JSON text that PostgreSQL writes (the list style of
 * `paymentLinkView`). Writing it for 10k links in one statement was most of the call's time, so
 * each link keeps its JSON text, written by a trigger at every insert and update, in three
 * fragments: the list puts the link type's name (`paymentType`) and the service's URL prefix
 * (`paymentLinkUrl`, from the configuration) between them. Rows without fragments (written with
 * triggers off) are written by the query itself, as before.
 */
export class Migration20261128030000_link_list_json extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table "payment_link" add column "list_json_head" text null, add column "list_json_body" text null, add column "list_json_tail" text null;`,
    );
    this.addSql(`create or replace function "payment_link_list_json"() returns trigger language plpgsql as $$
begin
  new.list_json_head := '{"id":' || new.id || ',"name":' || coalesce(to_json(new.name)::text, 'null') || ',"paymentType":';
  new.list_json_body := ',"logo":' || coalesce(to_json(new.logo)::text, 'null') ||
    ',"amount":' || coalesce(trim_scale(new.amount)::text, 'null') ||
    ',"dateCreated":"' || to_char(new.date_created at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') || '"' ||
    ',"reference":' || coalesce(to_json(new.reference)::text, 'null') || ',"createdBy":null,"creatorEmail":null,"isActive":' || new.is_active::text ||
    ',"currency":' || coalesce(to_json(new.currency)::text, 'null') || ',"limit":' || coalesce(new.customer_limit::text, 'null') ||
    ',"paymentLinkUrl":"';
  new.list_json_tail := substr(to_json(new.reference::text)::text, 2) || ',"appEnvironmentId":' || new.environment_id ||
    ',"paymentLinkType":null,"paymentLinkCode":null,"description":' || coalesce(to_json(new.description)::text, 'null') || '}';
  return new;
end $$;`);
    this.addSql(`create trigger "payment_link_list_json" before insert or update on "payment_link" for each row execute function "payment_link_list_json"();`);
    // The trigger writes the fragments of every existing link.
    this.addSql(`update "payment_link" set "id" = "id";`);
  }

  override async down(): Promise<void> {
    this.addSql(`drop trigger if exists "payment_link_list_json" on "payment_link";`);
    this.addSql(`drop function if exists "payment_link_list_json"();`);
    this.addSql(`alter table "payment_link" drop column "list_json_head", drop column "list_json_body", drop column "list_json_tail";`);
  }
}
