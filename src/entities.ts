import { Subsidiary } from './merchants/subsidiary.entity';
import { AppEnvironment } from './merchants/app-environment.entity';
import { ApiKey } from './merchants/api-key.entity';
import { EncryptionKey } from './merchants/encryption-key.entity';
import { PaymentLinkType } from './links/payment-link-type.entity';
import { Frequency } from './links/frequency.entity';
import { PaymentLink } from './links/payment-link.entity';
import { Customer } from './orders/customer.entity';
import { Order } from './orders/order.entity';
import { OrderPayment } from './orders/order-payment.entity';
import { CardDetail } from './orders/card-detail.entity';
import { OrderSummary, OrderSummaryDelta } from './orders/order-summary.entity';
import { RecurringPayment } from './payments/recurring-payment.entity';
import { Refund } from './payments/refund.entity';
import { AuthorizationAction } from './payments/authorization-action.entity';
import { Dispute } from './payments/dispute.entity';
import { TimelineEvent } from './timeline/timeline-event.entity';
import { Bank } from './banks/bank.entity';
import { WebhookEndpoint } from './merchants/webhook-endpoint.entity';
import { OutboxEvent } from './events/outbox-event.entity';
import { WebhookDelivery } from './events/webhook-delivery.entity';
import { WebhookAttempt } from './events/webhook-attempt.entity';
import { FeeRule } from './fees/fee-rule.entity';
import { SandboxAuthorization } from './payments/sandbox/sandbox-authorization.entity';
import { SandboxDispute } from './payments/sandbox/sandbox-dispute.entity';
import { IdempotencyKey } from './idempotency/idempotency-key.entity';
import { AuditEntry } from './merchants/audit/audit-entry.entity';
import { Member, MemberInvitation, MemberPasswordReset, MemberRecoveryCode } from './merchants/member.entity';

/** The entity registry: every domain's entities, as the ORM is configured with them (composition root, not `db/`). */
export const ENTITIES = [
  Subsidiary,
  AppEnvironment,
  ApiKey,
  EncryptionKey,
  PaymentLinkType,
  Frequency,
  PaymentLink,
  Customer,
  Order,
  OrderPayment,
  CardDetail,
  OrderSummary,
  OrderSummaryDelta,
  RecurringPayment,
  Refund,
  AuthorizationAction,
  Dispute,
  TimelineEvent,
  Bank,
  WebhookEndpoint,
  OutboxEvent,
  WebhookDelivery,
  WebhookAttempt,
  FeeRule,
  IdempotencyKey,
  SandboxAuthorization,
  SandboxDispute,
  AuditEntry,
  Member,
  MemberInvitation,
  MemberPasswordReset,
  MemberRecoveryCode,
];
