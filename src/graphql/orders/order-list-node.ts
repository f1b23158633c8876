import type { ListedOrder } from '../../orders/order-lists';
import { shownPaymentMethod } from '../../orders/order-filter';
import { ORDER_STATUS_NAMES } from '../../orders/order-status';
import { currencyOf, Money } from '../../shared/money';
import type { OrderType } from './order.types';
import { toCustomerType, toOrderType } from './order.mapping';

/**
 * A decimal string with two places, half up, as `toOrderType` prints money. PostgreSQL's
 * numeric(…, 4) text ends in "00" for every amount of two places: cut; anything else goes
 * through decimal arithmetic.
 */
function exact2(value: string | null | undefined): string {
  if (value === null || value === undefined) return '0.00';
  if (/^-?\d+\.\d\d00$/.test(value)) return value.slice(0, -2);
  return new Money(value).toFixed(2);
}

/**
 * An order of a list page, as GraphQL reads it: each field is worked out when (and only when)
 * the query asks for it. A page of 50 orders asking for a handful of fields no longer builds 50
 * complete order views (customer, payments, cards, link, every amount through decimal
 * arithmetic); the fields that need the complete view share one, built on first use by
 * `toOrderType`, so every value is the one the single-order queries answer.
 */
export class OrderListNode {
  private full: OrderType | undefined;

  constructor(
    private readonly listed: ListedOrder,
    private readonly publicUrl: string,
  ) {}

  private get complete(): OrderType {
    return (this.full ??= toOrderType(this.listed, this.publicUrl));
  }

  private get o() {
    return this.listed.order;
  }

  get orderReference() {
    return this.o.reference;
  }
  get paymentReference() {
    return this.o.paymentReference;
  }
  get productName() {
    return this.o.paymentLink?.name ?? (this.o.narration || this.o.reference);
  }
  get amount() {
    return exact2(this.o.amount);
  }
  get totalAmountCharged() {
    return exact2(this.o.totalChargedAmount);
  }
  get statusId() {
    return this.o.statusId;
  }
  get status() {
    return ORDER_STATUS_NAMES[this.o.statusId] ?? 'Unknown';
  }
  get paymentMethod() {
    return shownPaymentMethod(this.o.paymentMethod);
  }
  get paymentResponseCode() {
    return this.o.paymentResponseCode ?? '';
  }
  get paymentResponseMessage() {
    return this.o.paymentResponseMessage ?? '';
  }
  get narration() {
    return this.o.narration;
  }
  get remarks() {
    return this.o.remarks;
  }
  get currencyId() {
    return currencyOf(this.o.currency)?.id ?? 0;
  }
  get currencyName() {
    return this.o.currency;
  }
  get paymentLinkId() {
    return this.o.paymentLink?.id ?? null;
  }
  get paymentLinkReference() {
    return this.o.paymentLink?.reference ?? null;
  }
  get recurringPaymentId() {
    return this.o.recurringPaymentId;
  }
  get recurringPaymentReference() {
    return this.o.recurringPaymentReference;
  }
  get fee() {
    return exact2(this.o.fee);
  }
  get feeRate() {
    return this.complete.feeRate;
  }
  get subsidiaryFee() {
    return exact2(this.o.subsidiaryFee);
  }
  get customerFee() {
    return exact2(this.o.customerFee);
  }
  get dateCreated() {
    return this.o.createdAt;
  }
  get dateUpdated() {
    return this.o.updatedAt;
  }
  get datePaymentConfirmed() {
    return this.o.datePaymentConfirmed;
  }
  get captureMethod() {
    return this.o.captureMethod;
  }
  get amountAuthorized() {
    return this.o.authorizedAmount === null || this.o.authorizedAmount === undefined ? null : exact2(this.o.authorizedAmount);
  }
  get orderPayments() {
    return this.complete.orderPayments;
  }
  get customer() {
    return toCustomerType(this.o);
  }
  get cardDetails() {
    return this.complete.cardDetails;
  }
  get paymentLink() {
    return this.complete.paymentLink;
  }
}

/** The node of a list edge: typed as the `Order` object it resolves as. */
export const orderListNode = (listed: ListedOrder, publicUrl: string): OrderType => new OrderListNode(listed, publicUrl) as unknown as OrderType;
