import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_initial } from './Migration20261121000000_initial';
import { Migration20261121000100_fees_idempotency_sandbox } from './Migration20261121000100_fees_idempotency_sandbox';
import { Migration20261121000200_webhook_delivery } from './Migration20261121000200_webhook_delivery';
import { Migration20261121000300_order_link_index } from './Migration20261121000300_order_link_index';
import { Migration20261123100000_payment_integrity } from './Migration20261123100000_payment_integrity';
import { Migration20261123200000_webhook_safety_master_key_check } from './Migration20261123200000_webhook_safety_master_key_check';
import { Migration20261124010000_tenant_settings_notify } from './Migration20261124010000_tenant_settings_notify';
import { Migration20261124020000_lists_at_scale } from './Migration20261124020000_lists_at_scale';
import { Migration20261124080000_dashboard_session } from './Migration20261124080000_dashboard_session';
import { Migration20261124080100_webhook_secret_rotation } from './Migration20261124080100_webhook_secret_rotation';
import { Migration20261125030000_fee_bearer_customer_default } from './Migration20261125030000_fee_bearer_customer_default';
import { Migration20261125050000_merchant_return } from './Migration20261125050000_merchant_return';
import { Migration20261125020000_subscription_link_terms } from './Migration20261125020000_subscription_link_terms';
import { Migration20261125010000_webhook_secret_per_environment } from './Migration20261125010000_webhook_secret_per_environment';
import { Migration20261126010000_audit_log } from './Migration20261126010000_audit_log';
import { Migration20261126020000_members } from './Migration20261126020000_members';
import { Migration20261126030000_member_sessions } from './Migration20261126030000_member_sessions';
import { Migration20261127050000_capture_later } from './Migration20261127050000_capture_later';

/** Every migration, in order. Listed explicitly so the same code runs compiled, under Jest and in both database modes. */
export const MIGRATIONS: MigrationObject[] = [
  { name: 'Migration20261121000000_initial', class: Migration20261121000000_initial },
  { name: 'Migration20261121000100_fees_idempotency_sandbox', class: Migration20261121000100_fees_idempotency_sandbox },
  { name: 'Migration20261121000200_webhook_delivery', class: Migration20261121000200_webhook_delivery },
  { name: 'Migration20261121000300_order_link_index', class: Migration20261121000300_order_link_index },
  { name: 'Migration20261123100000_payment_integrity', class: Migration20261123100000_payment_integrity },
  { name: 'Migration20261123200000_webhook_safety_master_key_check', class: Migration20261123200000_webhook_safety_master_key_check },
  { name: 'Migration20261124010000_tenant_settings_notify', class: Migration20261124010000_tenant_settings_notify },
  { name: 'Migration20261124020000_lists_at_scale', class: Migration20261124020000_lists_at_scale },
  { name: 'Migration20261124080000_dashboard_session', class: Migration20261124080000_dashboard_session },
  { name: 'Migration20261124080100_webhook_secret_rotation', class: Migration20261124080100_webhook_secret_rotation },
  { name: 'Migration20261125030000_fee_bearer_customer_default', class: Migration20261125030000_fee_bearer_customer_default },
  { name: 'Migration20261125050000_merchant_return', class: Migration20261125050000_merchant_return },
  { name: 'Migration20261125020000_subscription_link_terms', class: Migration20261125020000_subscription_link_terms },
  { name: 'Migration20261125010000_webhook_secret_per_environment', class: Migration20261125010000_webhook_secret_per_environment },
  { name: 'Migration20261126010000_audit_log', class: Migration20261126010000_audit_log },
  { name: 'Migration20261126020000_members', class: Migration20261126020000_members },
  { name: 'Migration20261126030000_member_sessions', class: Migration20261126030000_member_sessions },
  { name: 'Migration20261127050000_capture_later', class: Migration20261127050000_capture_later },
];
