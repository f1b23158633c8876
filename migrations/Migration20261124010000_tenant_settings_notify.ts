import { Migration } from '@mikro-orm/migrations';

const TABLES = ['api_key', 'encryption_key', 'app_environment', 'subsidiary', 'fee_rule', 'webhook_endpoint'] as const;

/**
 * Tenant settings changes announced through the database: every insert, update, delete or
 * truncate of the tables the per-instance caches read (api-keys, encryption keys, environments,
 * merchants, fee rules, webhook endpoints) NOTIFYs `pgw_events` in the writing transaction, so
 * every instance hears it when it commits, whoever wrote it (a service instance, the command
 * line, an operator's SQL). The payload names the environment (`e`), the merchant (`s`), or
 * neither (everything: a platform default fee rule, a truncate).
 */
export class Migration20261124010000_tenant_settings_notify extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function "pgw_tenant_scope"(tbl text, r record) returns text language plpgsql as $$
begin
  if tbl in ('api_key', 'encryption_key', 'webhook_endpoint') then
    return json_build_object('k', 'tenant', 'e', r.environment_id)::text;
  elsif tbl = 'app_environment' then
    return json_build_object('k', 'tenant', 'e', r.id, 's', r.subsidiary_id)::text;
  elsif tbl = 'subsidiary' then
    return json_build_object('k', 'tenant', 's', r.id)::text;
  elsif tbl = 'fee_rule' and r.subsidiary_id is not null then
    return json_build_object('k', 'tenant', 's', r.subsidiary_id)::text;
  end if;
  return '{"k":"tenant"}';
end $$;`);
    this.addSql(`create or replace function "pgw_notify_tenant_change"() returns trigger language plpgsql as $$
begin
  if TG_OP in ('UPDATE', 'DELETE') then
    perform pg_notify('pgw_events', "pgw_tenant_scope"(TG_TABLE_NAME, OLD));
  end if;
  if TG_OP in ('INSERT', 'UPDATE') then
    perform pg_notify('pgw_events', "pgw_tenant_scope"(TG_TABLE_NAME, NEW));
  end if;
  return null;
end $$;`);
    this.addSql(`create or replace function "pgw_notify_tenant_truncate"() returns trigger language plpgsql as $$
begin
  perform pg_notify('pgw_events', '{"k":"tenant"}');
  return null;
end $$;`);
    for (const table of TABLES) {
      this.addSql(
        `create trigger "${table}_tenant_change" after insert or update or delete on "${table}" for each row execute function "pgw_notify_tenant_change"();`,
      );
      this.addSql(`create trigger "${table}_tenant_truncate" after truncate on "${table}" for each statement execute function "pgw_notify_tenant_truncate"();`);
    }
  }

  override async down(): Promise<void> {
    for (const table of TABLES) {
      this.addSql(`drop trigger if exists "${table}_tenant_change" on "${table}";`);
      this.addSql(`drop trigger if exists "${table}_tenant_truncate" on "${table}";`);
    }
    this.addSql(`drop function if exists "pgw_notify_tenant_change"();`);
    this.addSql(`drop function if exists "pgw_notify_tenant_truncate"();`);
    this.addSql(`drop function if exists "pgw_tenant_scope"(text, record);`);
  }
}
