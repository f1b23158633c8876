import { currencyOf, moneyNumber } from '../shared/money';
import { countryIdOf } from '../shared/countries';
import { formatTimestamp } from '../shared/time';
import { paymentLinkView } from '../links/payment-link.view';
import { paymentLinkUrl } from '../links/payment-link-url';
import type { OrderAggregate } from './order.service';
import { PAYMENT_OPTION_NAMES } from '../shared/payment-options';
import { ORDER_STATUS_NAMES } from './order-status';
import { customerSnapshotOf } from './customer-snapshot';

/** The .NET default DateTime the legacy service prints for a customer that does not exist. */
const EMPTY_DATE = '0001-01-01T00:00:00';

/**
 * "Order details": what order/verify returns, what webhooks carry, and what GraphQL's
 * `order` query mirrors. Built once, here.
 */
export function orderDetailsView(a: Pick<OrderAggregate, 'order' | 'payments' | 'cards'>, publicUrl: string) {
  const { order, payments, cards } = a;
  const currency = currencyOf(order.currency);
  return {
    orderReference: order.reference,
    paymentReference: order.paymentReference,
    productName: order.paymentLink?.name ?? (order.narration || order.reference),
    totalAmountCharged: moneyNumber(order.totalChargedAmount),
    statusId: order.statusId,
    status: ORDER_STATUS_NAMES[order.statusId] ?? 'Unknown',
    paymentMethod: order.paymentMethod ? (PAYMENT_OPTION_NAMES[order.paymentMethod] ?? order.paymentMethod) : '',
    paymentResponseCode: order.paymentResponseCode ?? '',
    paymentResponseMessage: order.paymentResponseMessage ?? '',
    narration: order.narration,
    remarks: order.remarks,
    currencyId: currency?.id ?? 0,
    paymentLinkId: order.paymentLink?.id ?? null,
    paymentLinkReference: order.paymentLink?.reference ?? null,
    recurringPaymentId: order.recurringPaymentId,
    recurringPaymentReference: order.recurringPaymentReference,
    currencyName: order.currency,
    fee: moneyNumber(order.fee),
    feeRate: moneyNumber(order.feeRate) ?? 0,
    subsidiaryFee: moneyNumber(order.subsidiaryFee),
    customerFee: moneyNumber(order.customerFee),
    dateCreated: formatTimestamp(order.createdAt),
    dateUpdated: formatTimestamp(order.updatedAt),
    datePaymentConfirmed: formatTimestamp(order.datePaymentConfirmed),
    orderPayments: payments.map((p) => ({
      orderId: order.id,
      orderPaymentReference: p.reference,
      paymentOptionId: p.paymentOptionId,
      paymentOption: p.paymentOption,
      statusId: p.statusId,
      status: ORDER_STATUS_NAMES[p.statusId] ?? 'Unknown',
      responseCode: p.responseCode,
      responseMessage: p.responseMessage,
      orderPaymentInstrument: p.instrument,
      remarks: p.remarks,
      dateCreated: formatTimestamp(p.dateCreated),
      dateUpdated: formatTimestamp(p.dateUpdated),
    })),
    customer: customerDetailsView(order),
    cardDetails: cards.map((c) => ({
      orderPaymentId: typeof c.orderPayment === 'object' ? c.orderPayment.id : c.orderPayment,
      status: c.status,
      country: c.country,
      cardToken: c.cardToken,
      cardExpiryMonth: c.cardExpiryMonth,
      cardExpiryYear: c.cardExpiryYear,
      cardType: c.cardType,
      cardIssuer: c.cardIssuer,
      cardFirstSixDigits: c.cardFirstSixDigits,
      cardLastFourDigits: c.cardLastFourDigits,
      dateCreated: formatTimestamp(c.dateCreated),
      appEnvironmentId: typeof c.environment === 'object' ? c.environment.id : c.environment,
    })),
    paymentLink: order.paymentLink ? paymentLinkView(order.paymentLink, paymentLinkUrl(publicUrl, order.paymentLink.reference), 'single') : null,
  };
}

/** The order's customer part of the details: the customer as the order was created with; the record supplies only its id and dates. */
export function customerDetailsView(order: OrderAggregate['order']) {
  const record = order.customer;
  const customer = customerSnapshotOf(order);
  return customer
    ? {
        customerId: record ? String(record.id) : null,
        firstName: customer.firstName,
        lastName: customer.lastName,
        emailAddress: customer.email,
        countryShortName: customer.country,
        customerGroup: null,
        countryId: countryIdOf(customer.country) ?? 0,
        globalStatusId: 1,
        globalStatus: 'Active',
        mobileNumber: customer.mobile,
        isBlacklisted: record?.isBlacklisted ?? false,
        reasonBlacklisted: record?.reasonBlacklisted ?? null,
        dateCreated: record ? formatTimestamp(record.dateCreated) : EMPTY_DATE,
        dateUpdated: record ? formatTimestamp(record.dateUpdated) : null,
      }
    : {
        customerId: null,
        firstName: null,
        lastName: null,
        emailAddress: null,
        countryShortName: null,
        customerGroup: null,
        countryId: 0,
        globalStatusId: 0,
        globalStatus: null,
        mobileNumber: null,
        isBlacklisted: false,
        reasonBlacklisted: null,
        dateCreated: EMPTY_DATE,
        dateUpdated: null,
      };
}
