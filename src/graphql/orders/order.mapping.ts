import type { OrderAggregate } from '../../orders/order.service';
import { ORDER_STATUS_NAMES, isFinalStatus } from '../../orders/order-status';
import { customerDetailsView, orderDetailsView } from '../../orders/order-details.view';
import type { TimelineEvent } from '../../timeline/timeline-event.entity';
import { Money } from '../../shared/money';
import { paymentLinkUrl } from '../../links/payment-link-url';
import { toPaymentLinkType } from '../links/payment-link.mapping';
import type { OrderStatusChange } from '../../events/order-status-bus';
import type { OrderStatusChangeType, OrderStatusInfoType, OrderType, TimelineEntryType } from './order.types';
import type { CaptureMethodEnum } from '../links/payment-link.types';
import { pendingAuthenticationUrl } from '../../payments/authentication-page';

const exact = (v: string | null | undefined) => new Money(v ?? 0).toFixed(2);

/** The order's customer as GraphQL shows it (the record's dates as dates). */
export function toCustomerType(order: OrderAggregate['order']): OrderType['customer'] {
  return { ...customerDetailsView(order), dateCreated: order.customer?.dateCreated ?? null, dateUpdated: order.customer?.dateUpdated ?? null };
}

/** The order as GraphQL shows it: the order details view, with money as exact decimals and dates as dates. */
export function toOrderType(a: Pick<OrderAggregate, 'order' | 'payments' | 'cards'>, publicUrl: string): OrderType {
  const view = orderDetailsView(a, publicUrl);
  const { order } = a;
  return {
    ...view,
    amount: exact(order.amount),
    totalAmountCharged: exact(order.totalChargedAmount),
    fee: exact(order.fee),
    feeRate: new Money(order.feeRate ?? 0).toString(),
    subsidiaryFee: exact(order.subsidiaryFee),
    customerFee: exact(order.customerFee),
    dateCreated: order.createdAt,
    dateUpdated: order.updatedAt,
    datePaymentConfirmed: order.datePaymentConfirmed,
    captureMethod: order.captureMethod as CaptureMethodEnum,
    amountAuthorized: order.authorizedAmount === null ? null : exact(order.authorizedAmount),
    orderPayments: a.payments.map((p, i) => ({
      ...view.orderPayments[i]!,
      authenticationUrl: pendingAuthenticationUrl(publicUrl, p),
      dateCreated: p.dateCreated,
      dateUpdated: p.dateUpdated,
    })),
    cardDetails: a.cards.map((c, i) => ({ ...view.cardDetails[i]!, dateCreated: c.dateCreated })),
    customer: toCustomerType(order),
    paymentLink: order.paymentLink ? toPaymentLinkType(order.paymentLink, paymentLinkUrl(publicUrl, order.paymentLink.reference)) : null,
  };
}

/** The order's status, as order/status answers it. */
export function toOrderStatusInfoType(order: OrderAggregate['order']): OrderStatusInfoType {
  const final = isFinalStatus(order.statusId);
  return {
    reference: order.reference,
    statusId: order.statusId,
    status: ORDER_STATUS_NAMES[order.statusId] ?? 'Unknown',
    isFinalStatus: final,
    requeryNeeded: !final,
    paymentResponseCode: order.paymentResponseCode ?? '',
    paymentResponseMessage: order.paymentResponseMessage ?? '',
    datePaymentConfirmed: order.datePaymentConfirmed,
  };
}

/** One entry of an order's timeline. */
export function toTimelineEntryType(e: Pick<TimelineEvent, 'id' | 'event' | 'description' | 'source' | 'metadata' | 'createdAt'>): TimelineEntryType {
  return { id: String(e.id), event: e.event, description: e.description, source: e.source, metadata: e.metadata, createdAt: e.createdAt };
}

/** One state change of an order, as subscriptions deliver it. */
export function toOrderStatusChangeType(change: OrderStatusChange): OrderStatusChangeType {
  return { reference: change.reference, statusId: change.statusId, status: change.status, sequence: change.sequence, eventId: change.eventId };
}
