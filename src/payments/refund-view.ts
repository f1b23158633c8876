import { Money } from '../shared/money';
import type { RefundStatus } from './payment-state';
import type { Refund } from './refund.entity';

/**
 * A refund as every interface shows it (GraphQL's `Refund`, the webhook's `data`): the amount an
 * exact decimal string with two places, times as instants (ISO 8601 once serialised).
 */
export interface RefundView {
  id: string;
  orderReference: string;
  amount: string;
  currency: string;
  status: RefundStatus;
  reason: string | null;
  failureReason: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export function refundView(refund: Refund, orderReference: string): RefundView {
  return {
    id: refund.id,
    orderReference,
    amount: new Money(refund.amount).toFixed(2),
    currency: refund.currency,
    status: refund.status,
    reason: refund.reason,
    failureReason: refund.failureReason,
    createdAt: refund.createdAt,
    updatedAt: refund.updatedAt,
  };
}
