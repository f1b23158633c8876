import 'reflect-metadata';
import type { GraphQLSchema } from 'graphql';
import { buildSchema } from 'type-graphql';
import { createPubSub } from '@graphql-yoga/subscription';
import { authChecker } from './auth-checker';
import { HealthResolver } from './health.resolver';
import { MerchantResolver } from './merchants/merchant.resolver';
import { MemberResolver } from './merchants/member.resolver';
import { PasswordResetResolver } from './merchants/password-reset.resolver';
import { AccountResolver } from './merchants/account.resolver';
import { PaymentLinkResolver } from './links/payment-link.resolver';
import { OrderResolver } from './orders/order.resolver';
import { OrderPrivateFieldsResolver } from './orders/order-private-fields.resolver';
import { RefundResolver, RefundSummaryResolver } from './orders/refund.resolver';
import { DisputeResolver, DisputeSummaryResolver } from './orders/dispute.resolver';
import { ReferenceResolver } from './reference/reference.resolver';
import { WebhookResolver } from './events/webhook.resolver';
import { AuditResolver } from './audit/audit.resolver';

export const RESOLVERS = [
  HealthResolver,
  MerchantResolver,
  PaymentLinkResolver,
  OrderResolver,
  OrderPrivateFieldsResolver,
  RefundResolver,
  RefundSummaryResolver,
  DisputeResolver,
  DisputeSummaryResolver,
  ReferenceResolver,
  WebhookResolver,
  AuditResolver,
  MemberResolver,
  PasswordResetResolver,
  AccountResolver,
] as const;

let cached: Promise<GraphQLSchema> | undefined;

/** The schema, built from the resolver classes; schema.graphql is its printed form. */
export function buildGraphqlSchema(): Promise<GraphQLSchema> {
  cached ??= buildSchema({
    resolvers: [...RESOLVERS],
    authChecker,
    authMode: 'error',
    validate: false,
    // Subscriptions bring their own source (the order status bus); type-graphql still wants a pub/sub.
    pubSub: createPubSub(),
  });
  return cached;
}
