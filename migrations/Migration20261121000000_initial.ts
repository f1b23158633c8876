import { Migration } from '@mikro-orm/migrations';

/**
 * The initial schema. Generated from the entities, then completed by hand with the checks
 * the database must enforce on its own (money, card data shape) and the seeded reference data.
 */
export class Migration20261121000000_initial extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create table "bank" ("id" int not null, "name" varchar(150) not null, "country_id" int not null, "bank_code" varchar(10) not null, "is_microfinance" boolean null, "is_mortgage" boolean null, "ussd_bank_code" varchar(20) null, "logo" text not null, "date_created" timestamptz(6) not null, "date_updated" timestamptz(6) null, "date_deleted" timestamptz(6) null, "created_by" int not null, "updated_by" int null, "deleted_by" int null, constraint "bank_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "bank" add constraint "bank_bank_code_unique" unique ("bank_code");`);
    this.addSql(
      `create table "frequency" ("id" int not null, "name" varchar(50) not null, "description" varchar(200) not null, "hours" int not null, "days" int not null, "is_active" boolean null default true, "date_created" timestamptz(6) not null, "date_updated" timestamptz(6) null, "date_deleted" timestamptz(6) null, "created_by" int not null, "updated_by" int null, "deleted_by" int null, constraint "frequency_pkey" primary key ("id"));`,
    );
    this.addSql(
      `create table "payment_link_type" ("id" int not null, "code" varchar(10) not null, "payment_link_name" varchar(100) not null, "description" varchar(300) not null, "status" boolean not null, "date_created" timestamptz(6) not null, "date_updated" timestamptz(6) null, "date_deleted" timestamptz(6) null, "created_by" int not null, "updated_by" int null, "deleted_by" int null, constraint "payment_link_type_pkey" primary key ("id"));`,
    );
    this.addSql(`alter table "payment_link_type" add constraint "payment_link_type_code_unique" unique ("code");`);
    this.addSql(
      `create table "subsidiary" ("id" serial primary key, "name" varchar(200) not null, "country" char(2) not null, "support_email" varchar(320) not null, "customization" jsonb null, "webhook_secret_sealed" text not null, "paypal_enabled" boolean not null default true, "created_at" timestamptz(6) not null default now(), "updated_at" timestamptz(6) not null default now());`,
    );
    this.addSql(
      `create table "app_environment" ("id" serial primary key, "subsidiary_id" int not null, "mode" text check ("mode" in ('test', 'live')) not null, "fee_bearer" text check ("fee_bearer" in ('merchant', 'customer')) not null default 'merchant', "created_at" timestamptz(6) not null default now());`,
    );
    this.addSql(`alter table "app_environment" add constraint "app_environment_subsidiary_id_mode_unique" unique ("subsidiary_id", "mode");`);
    this.addSql(
      `create table "payment_link" ("id" serial primary key, "environment_id" int not null, "type_id" int not null, "name" varchar(200) not null, "description" text null, "reference" varchar(40) not null, "amount" numeric(20,4) null, "currency" char(3) not null, "auth_option" text check ("auth_option" in ('AUTH', 'NOAUTH')) not null default 'AUTH', "mobile" varchar(40) null, "background_image" text null, "website" text null, "logo" text null, "customer_limit" int null, "is_active" boolean not null default true, "date_created" timestamptz(6) not null default now(), "date_updated" timestamptz(6) not null default now());`,
    );
    this.addSql(`alter table "payment_link" add constraint "payment_link_reference_unique" unique ("reference");`);
    this.addSql(`create index "payment_link_environment_id_id_index" on "payment_link" ("environment_id", "id");`);
    this.addSql(
      `create table "encryption_key" ("id" serial primary key, "environment_id" int not null, "bits" int not null, "encryption_key" text not null, "private_key_sealed" text not null, "created_at" timestamptz(6) not null default now(), "expires_at" timestamptz(6) null);`,
    );
    this.addSql(`create index "encryption_key_environment_id_index" on "encryption_key" ("environment_id");`);
    this.addSql(
      `create table "customer" ("id" serial primary key, "environment_id" int not null, "email" varchar(320) not null, "first_name" varchar(100) not null, "last_name" varchar(100) not null, "mobile" varchar(40) not null, "country" char(2) not null, "is_blacklisted" boolean not null default false, "reason_blacklisted" text null, "date_created" timestamptz(6) not null default now(), "date_updated" timestamptz(6) not null default now());`,
    );
    this.addSql(`create index "customer_environment_id_email_index" on "customer" ("environment_id", "email");`);
    this.addSql(
      `create table "checkout_order" ("id" serial primary key, "environment_id" int not null, "reference" varchar(100) not null, "processor_reference" varchar(40) not null, "payment_reference" varchar(40) not null, "customer_id" int null, "amount" numeric(20,4) not null, "currency" char(3) not null, "fee" numeric(20,4) not null default '0', "fee_rate" numeric(10,6) null, "subsidiary_fee" numeric(20,4) not null default '0', "customer_fee" numeric(20,4) not null default '0', "total_charged_amount" numeric(20,4) not null, "status_id" smallint not null default 1, "narration" text not null, "remarks" text not null default '', "redirect_url" text not null, "payment_method" varchar(20) null, "payment_response_code" varchar(10) null, "payment_response_message" text null, "payment_link_id" int null, "frequency_id" int null, "number_of_payments" int null, "recurring_payment_id" int null, "recurring_payment_reference" varchar(40) null, "ip_address" varchar(45) null, "provider_response_date" timestamptz(6) null, "date_payment_confirmed" timestamptz(6) null, "event_sequence" int not null default 0, "version" int not null default 1, "created_at" timestamptz(6) not null default now(), "updated_at" timestamptz(6) not null default now());`,
    );
    this.addSql(`alter table "checkout_order" add constraint "checkout_order_processor_reference_unique" unique ("processor_reference");`);
    this.addSql(`alter table "checkout_order" add constraint "checkout_order_payment_reference_unique" unique ("payment_reference");`);
    this.addSql(`create index "checkout_order_environment_id_created_at_index" on "checkout_order" ("environment_id", "created_at");`);
    this.addSql(`alter table "checkout_order" add constraint "checkout_order_environment_reference_unique" unique ("environment_id", "reference");`);
    this.addSql(
      `create table "recurring_payment" ("id" serial primary key, "reference" varchar(40) not null, "environment_id" int not null, "order_id" int not null, "frequency_id" int not null, "number_of_payments" int not null, "payments_made" int not null default 0, "consecutive_failures" int not null default 0, "state" text check ("state" in ('pending', 'active', 'completed', 'cancelled', 'failed')) not null default 'pending', "card_token" varchar(100) null, "next_charge_at" timestamptz(6) null, "created_at" timestamptz(6) not null default now(), "updated_at" timestamptz(6) not null default now());`,
    );
    this.addSql(`alter table "recurring_payment" add constraint "recurring_payment_reference_unique" unique ("reference");`);
    this.addSql(`create index "recurring_payment_due_index" on "recurring_payment" ("state", "next_charge_at");`);
    this.addSql(
      `create table "outbox_event" ("id" uuid not null, "environment_id" int not null, "order_id" int null, "notify" varchar(40) not null, "notify_type" varchar(40) not null, "sequence" int not null default 0, "payload" jsonb not null, "created_at" timestamptz(6) not null default now(), constraint "outbox_event_pkey" primary key ("id"));`,
    );
    this.addSql(`create index "outbox_event_environment_id_index" on "outbox_event" ("environment_id");`);
    this.addSql(`create index "outbox_event_order_id_sequence_index" on "outbox_event" ("order_id", "sequence");`);
    this.addSql(
      `create table "order_payment" ("id" serial primary key, "order_id" int not null, "reference" varchar(40) not null, "payment_option_id" smallint not null, "payment_option" varchar(40) not null, "status_id" smallint not null, "response_code" varchar(10) not null, "response_message" text not null, "instrument" text null, "remarks" text not null default '', "amount" numeric(20,4) not null, "fee" numeric(20,4) not null, "processor_token" varchar(100) null, "authentication_expires_at" timestamptz(6) null, "date_created" timestamptz(6) not null default now(), "date_updated" timestamptz(6) not null default now());`,
    );
    this.addSql(`create index "order_payment_order_id_index" on "order_payment" ("order_id");`);
    this.addSql(`alter table "order_payment" add constraint "order_payment_reference_unique" unique ("reference");`);
    this.addSql(`create index "order_payment_authentication_expires_at_index" on "order_payment" ("authentication_expires_at");`);
    this.addSql(
      `create table "card_detail" ("id" serial primary key, "order_payment_id" int not null, "environment_id" int not null, "status" boolean not null, "country" varchar(2) null, "card_token" varchar(100) null, "card_expiry_month" char(2) not null, "card_expiry_year" char(2) not null, "card_type" varchar(30) not null, "card_issuer" varchar(100) not null, "card_first_six_digits" char(6) not null, "card_last_four_digits" char(4) not null, "date_created" timestamptz(6) not null default now());`,
    );
    this.addSql(`create index "card_detail_order_payment_id_index" on "card_detail" ("order_payment_id");`);
    this.addSql(
      `create table "api_key" ("id" serial primary key, "environment_id" int not null, "kind" text check ("kind" in ('public', 'private')) not null, "key_hash" char(64) not null, "hint" varchar(40) not null, "created_at" timestamptz(6) not null default now(), "expires_at" timestamptz(6) null);`,
    );
    this.addSql(`alter table "api_key" add constraint "api_key_key_hash_unique" unique ("key_hash");`);
    this.addSql(`create index "api_key_environment_id_kind_index" on "api_key" ("environment_id", "kind");`);
    this.addSql(
      `create table "timeline_event" ("id" bigserial primary key, "order_id" int not null, "event" varchar(100) not null, "description" text null, "source" text check ("source" in ('system', 'merchant')) not null, "metadata" jsonb null, "created_at" timestamptz(6) not null default now());`,
    );
    this.addSql(`create index "timeline_event_order_id_id_index" on "timeline_event" ("order_id", "id");`);
    this.addSql(
      `create table "webhook_delivery" ("id" bigserial primary key, "event_id" uuid not null, "url" text not null, "state" text check ("state" in ('pending', 'delivered', 'dead')) not null default 'pending', "attempt_count" int not null default 0, "next_attempt_at" timestamptz(6) not null default now(), "locked_until" timestamptz(6) null, "delivered_at" timestamptz(6) null, "created_at" timestamptz(6) not null default now());`,
    );
    this.addSql(`create index "webhook_delivery_event_id_index" on "webhook_delivery" ("event_id");`);
    this.addSql(`create index "webhook_delivery_due_index" on "webhook_delivery" ("state", "next_attempt_at");`);
    this.addSql(
      `create table "webhook_attempt" ("id" bigserial primary key, "delivery_id" bigint not null, "status_code" int null, "latency_ms" int not null, "error" text null, "response_body" text null, "created_at" timestamptz(6) not null default now());`,
    );
    this.addSql(`create index "webhook_attempt_delivery_id_index" on "webhook_attempt" ("delivery_id");`);
    this.addSql(
      `create table "webhook_endpoint" ("id" serial primary key, "environment_id" int not null, "url" text not null, "is_active" boolean not null default true, "created_at" timestamptz(6) not null default now(), "updated_at" timestamptz(6) not null default now());`,
    );
    this.addSql(`alter table "webhook_endpoint" add constraint "webhook_endpoint_environment_id_unique" unique ("environment_id");`);
    this.addSql(
      `alter table "app_environment" add constraint "app_environment_subsidiary_id_foreign" foreign key ("subsidiary_id") references "subsidiary" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "payment_link" add constraint "payment_link_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "payment_link" add constraint "payment_link_type_id_foreign" foreign key ("type_id") references "payment_link_type" ("id") on update cascade;`,
    );
    this.addSql(
      `alter table "encryption_key" add constraint "encryption_key_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "customer" add constraint "customer_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "checkout_order" add constraint "checkout_order_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "checkout_order" add constraint "checkout_order_customer_id_foreign" foreign key ("customer_id") references "customer" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "checkout_order" add constraint "checkout_order_payment_link_id_foreign" foreign key ("payment_link_id") references "payment_link" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "checkout_order" add constraint "checkout_order_frequency_id_foreign" foreign key ("frequency_id") references "frequency" ("id") on update cascade on delete set null;`,
    );
    this.addSql(
      `alter table "recurring_payment" add constraint "recurring_payment_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "recurring_payment" add constraint "recurring_payment_order_id_foreign" foreign key ("order_id") references "checkout_order" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "recurring_payment" add constraint "recurring_payment_frequency_id_foreign" foreign key ("frequency_id") references "frequency" ("id") on update cascade;`,
    );
    this.addSql(
      `alter table "outbox_event" add constraint "outbox_event_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "outbox_event" add constraint "outbox_event_order_id_foreign" foreign key ("order_id") references "checkout_order" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "order_payment" add constraint "order_payment_order_id_foreign" foreign key ("order_id") references "checkout_order" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "card_detail" add constraint "card_detail_order_payment_id_foreign" foreign key ("order_payment_id") references "order_payment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "card_detail" add constraint "card_detail_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "api_key" add constraint "api_key_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "timeline_event" add constraint "timeline_event_order_id_foreign" foreign key ("order_id") references "checkout_order" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_delivery" add constraint "webhook_delivery_event_id_foreign" foreign key ("event_id") references "outbox_event" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_attempt" add constraint "webhook_attempt_delivery_id_foreign" foreign key ("delivery_id") references "webhook_delivery" ("id") on update cascade on delete cascade;`,
    );
    this.addSql(
      `alter table "webhook_endpoint" add constraint "webhook_endpoint_environment_id_foreign" foreign key ("environment_id") references "app_environment" ("id") on update cascade on delete cascade;`,
    );

    // Money is exact and positive; card data has the only shape it may have.
    this.addSql(`alter table "checkout_order" add constraint "checkout_order_amount_positive" check ("amount" > 0);`);
    this.addSql(
      `alter table "checkout_order" add constraint "checkout_order_fees_non_negative" check ("fee" >= 0 and "subsidiary_fee" >= 0 and "customer_fee" >= 0 and "total_charged_amount" >= "amount");`,
    );
    this.addSql(`alter table "checkout_order" add constraint "checkout_order_status_known" check ("status_id" >= 1 and "status_id" <= 5);`);
    this.addSql(`alter table "order_payment" add constraint "order_payment_amount_positive" check ("amount" > 0 and "fee" >= 0);`);
    this.addSql(`alter table "payment_link" add constraint "payment_link_amount_positive" check ("amount" is null or "amount" > 0);`);
    this.addSql(`alter table "payment_link" add constraint "payment_link_limit_positive" check ("customer_limit" is null or "customer_limit" > 0);`);
    this.addSql(
      `alter table "card_detail" add constraint "card_detail_digits_shape" check ("card_first_six_digits" ~ '^[0-9]{6}$' and "card_last_four_digits" ~ '^[0-9]{4}$');`,
    );
    this.addSql(
      `alter table "recurring_payment" add constraint "recurring_payment_counts" check ("number_of_payments" > 0 and "payments_made" >= 0 and "payments_made" <= "number_of_payments");`,
    );
    this.addSql(`create index "checkout_order_environment_id_status_id_index" on "checkout_order" ("environment_id", "status_id");`);
    this.addSql(`create index "payment_link_environment_id_date_created_index" on "payment_link" ("environment_id", "date_created");`);

    this.addSql(`insert into "payment_link_type" ("id", "code", "payment_link_name", "description", "status", "date_created", "created_by") values
      (1, 'SC', 'Single Charge', 'A link that accepts a single successful payment', true, '2024-01-01T00:00:00Z', 1),
      (2, 'MC', 'Multiple Charge', 'A link that accepts many payments', true, '2024-01-01T00:00:00Z', 1),
      (5, 'SUB', 'Subscription Payments', 'A link that charges the customer at a frequency', true, '2024-01-01T00:00:00Z', 1);`);

    this.addSql(`insert into "frequency" ("id", "name", "description", "hours", "days", "is_active", "date_created", "created_by") values
      (1, 'Hourly', 'Charged every hour', 1, 0, true, '2024-01-01T00:00:00Z', 1),
      (2, 'Daily', 'Charged every day', 24, 1, true, '2024-01-01T00:00:00Z', 1),
      (3, 'Weekly', 'Charged every week', 168, 7, true, '2024-01-01T00:00:00Z', 1),
      (4, 'Bi-Weekly', 'Charged every two weeks', 336, 14, true, '2024-01-01T00:00:00Z', 1),
      (5, 'Every 3 Weeks', 'Charged every three weeks', 504, 21, true, '2024-01-01T00:00:00Z', 1),
      (6, 'Monthly', 'Charged every 30 days', 720, 30, true, '2024-01-01T00:00:00Z', 1),
      (7, 'Bi-Monthly', 'Charged every 60 days', 1440, 60, true, '2024-01-01T00:00:00Z', 1),
      (8, 'Every 3 Months', 'Charged every 90 days', 2160, 90, true, '2024-01-01T00:00:00Z', 1),
      (9, 'Every 6 Months', 'Charged every 180 days', 4320, 180, true, '2024-01-01T00:00:00Z', 1),
      (10, 'Yearly', 'Charged every 365 days', 8760, 365, true, '2024-01-01T00:00:00Z', 1),
      (11, 'Bi-Yearly', 'Charged every 730 days', 17520, 730, true, '2024-01-01T00:00:00Z', 1);`);

    // Banks of Nigeria (country 566, ISO 3166-1 numeric) with their CBN / NIP institution codes.
    const banks: Array<[number, string, string, boolean | null, boolean | null, string | null]> = [
      [1, 'Access Bank', '044', false, false, '*901#'],
      [2, 'Citibank Nigeria', '023', false, false, null],
      [3, 'Ecobank Nigeria', '050', false, false, '*326#'],
      [4, 'Fidelity Bank', '070', false, false, '*770#'],
      [5, 'First Bank of Nigeria', '011', false, false, '*894#'],
      [6, 'First City Monument Bank', '214', false, false, '*329#'],
      [7, 'Globus Bank', '00103', false, false, '*989#'],
      [8, 'Guaranty Trust Bank', '058', false, false, '*737#'],
      [9, 'Jaiz Bank', '301', false, false, '*389*301#'],
      [10, 'Keystone Bank', '082', false, false, '*7111#'],
      [11, 'Lotus Bank', '303', false, false, null],
      [12, 'Optimus Bank', '107', false, false, null],
      [13, 'Parallex Bank', '104', false, false, null],
      [14, 'Polaris Bank', '076', false, false, '*833#'],
      [15, 'PremiumTrust Bank', '105', false, false, null],
      [16, 'Providus Bank', '101', false, false, null],
      [17, 'Signature Bank', '106', false, false, null],
      [18, 'Stanbic IBTC Bank', '221', false, false, '*909#'],
      [19, 'Standard Chartered Bank Nigeria', '068', false, false, '*977#'],
      [20, 'Sterling Bank', '232', false, false, '*822#'],
      [21, 'SunTrust Bank', '100', false, false, '*5230#'],
      [22, 'TAJBank', '302', false, false, '*898#'],
      [23, 'Titan Trust Bank', '102', false, false, null],
      [24, 'Union Bank of Nigeria', '032', false, false, '*826#'],
      [25, 'United Bank for Africa', '033', false, false, '*919#'],
      [26, 'Unity Bank', '215', false, false, '*7799#'],
      [27, 'Wema Bank', '035', false, false, '*945#'],
      [28, 'Zenith Bank', '057', false, false, '*966#'],
      [29, 'Kuda Microfinance Bank', '50211', true, false, null],
      [30, 'Moniepoint Microfinance Bank', '50515', true, false, null],
      [31, 'VFD Microfinance Bank', '566', true, false, null],
      [32, 'Rubies Microfinance Bank', '125', true, false, null],
      [33, 'OPay Digital Services', '999992', false, false, '*955#'],
      [34, 'PalmPay', '999991', false, false, '*861#'],
      [35, 'FBN Mortgages', '090107', false, true, null],
      [36, 'Abbey Mortgage Bank', '070010', false, true, null],
    ];
    const values = banks
      .map(([id, name, code, micro, mortgage, ussd]) => {
        const q = (s: string | null) => (s === null ? 'null' : `'${s.replace(/'/g, "''")}'`);
        return `(${id}, ${q(name)}, 566, ${q(code)}, ${micro}, ${mortgage}, ${q(ussd)}, ${q(`/assets/banks/${code}.svg`)}, '2024-01-01T00:00:00Z', 1)`;
      })
      .join(',\n      ');
    this
      .addSql(`insert into "bank" ("id", "name", "country_id", "bank_code", "is_microfinance", "is_mortgage", "ussd_bank_code", "logo", "date_created", "created_by") values
      ${values};`);
  }
}
