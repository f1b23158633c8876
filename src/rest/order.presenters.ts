import { currencyOf, moneyNumber } from '../shared/money';
import { formatTimestamp } from '../shared/time';
import { subsidiaryRecord } from './subsidiary.presenter';
import { PAYMENT_OPTION_NAMES } from '../shared/payment-options';
import { type OrderAggregate } from '../orders/order.service';
import { ORDER_STATUS_NAMES, isFinalStatus } from '../orders/order-status';
import type { FeeQuote } from '../fees/fee.service';
import { customerSnapshotOf } from '../orders/customer-snapshot';
import type { OrderStatusRead } from '../orders/order.queries';

/** order/create `data`. */
export function orderCreatedView(a: OrderAggregate, paypalEnabled: boolean) {
  const { order, subsidiary } = a;
  const customer = customerSnapshotOf(order)!;
  const options = [{ code: 'C', name: PAYMENT_OPTION_NAMES.C, currency: order.currency }];
  if (paypalEnabled) options.push({ code: 'PAYPAL', name: PAYMENT_OPTION_NAMES.PAYPAL, currency: order.currency });
  const orderName = order.paymentLink?.name ?? (order.narration || order.reference);
  return {
    order: {
      reference: order.reference,
      processorReference: order.processorReference,
      orderPaymentReference: a.payments[a.payments.length - 1]?.reference ?? null,
      amount: moneyNumber(order.amount),
      fee: moneyNumber(order.fee),
      feeRate: moneyNumber(order.feeRate),
      statusId: order.statusId,
      status: ORDER_STATUS_NAMES[order.statusId],
      currency: order.currency,
      narration: order.narration,
      paymentLinkId: order.paymentLink?.id ?? null,
      recurringPaymentId: order.recurringPaymentId,
      paymentLinkReference: order.paymentLink?.reference ?? null,
      recurringPaymentReference: order.recurringPaymentReference,
    },
    subsidiary: subsidiaryRecord(subsidiary),
    customer: {
      email: customer.email,
      firstName: customer.firstName,
      lastName: customer.lastName,
      mobile: customer.mobile,
      country: customer.country,
    },
    payment: { code: null, source: null, selectedOption: null, accountNumber: null, bankProviderName: null },
    otherPaymentOptions: options,
    savedCards: [],
    subsidiaryOrderSummary: {
      orderName,
      totalAmount: moneyNumber(order.totalChargedAmount),
      reference: order.reference,
      currency: order.currency,
      orderItems: [{ name: orderName, amount: moneyNumber(order.amount) }],
    },
  };
}

/** order/status `data` (snake_case) and the Envelope B extras; the merchant's id is the tenant's. */
export function orderStatusView(order: OrderStatusRead, subsidiaryId: number) {
  const final = isFinalStatus(order.statusId);
  const record = {
    payment_reference: order.paymentReference,
    order_reference: order.reference,
    product_id: order.paymentLink?.id ?? 0,
    subsidiary_id: subsidiaryId,
    wallet_id: typeof order.environment === 'object' ? order.environment.id : order.environment,
    customer_id: order.customer?.id ?? 0,
    total_charged_amount: moneyNumber(order.totalChargedAmount),
    payment_status: order.statusId,
    currency_id: currencyOf(order.currency)?.id ?? 0,
    fee: moneyNumber(order.fee),
    subsidiary_fee: moneyNumber(order.subsidiaryFee),
    customer_fee: moneyNumber(order.customerFee),
    payment_type: order.paymentMethod ?? '',
    payment_response_code: order.paymentResponseCode ?? '',
    payment_response_message: order.paymentResponseMessage ?? '',
    provider_response_date: formatTimestamp(order.providerResponseDate),
    date_payment_confirmed: formatTimestamp(order.datePaymentConfirmed),
    narration: order.narration,
    remarks: order.remarks,
    parent_transaction_id: null,
    id: order.id,
    created_by: subsidiaryId,
    updated_by: subsidiaryId,
    deleted_by: null,
    date_created: formatTimestamp(order.createdAt),
    date_updated: formatTimestamp(order.updatedAt),
    date_deleted: null,
  };
  return {
    record,
    extras: { isFinalStatus: final, requeryNeeded: !final, requeryType: final ? null : 'status' },
  };
}

/** order/fee `data`. */
export function feeView(q: FeeQuote) {
  return {
    fee: moneyNumber(q.fee),
    amount: moneyNumber(q.amount),
    subsidiaryFee: moneyNumber(q.subsidiaryFee),
    customerFee: moneyNumber(q.customerFee),
    totalChargedAmount: moneyNumber(q.totalChargedAmount),
    paymentOption: q.paymentOption,
  };
}

/** order/pay `data`. */
export function payResultView(r: { aggregate: OrderAggregate; payment: import('../orders/order-payment.entity').OrderPayment; redirectUrl: string }) {
  const { order } = r.aggregate;
  return {
    paymentDetail: { redirectUrl: r.redirectUrl, recipientAccount: null, paymentReference: order.paymentReference },
    bankTransferDetails: null,
    orderPayment: {
      orderId: order.id,
      orderPaymentReference: r.payment.reference,
      currency: order.currency,
      statusId: r.payment.statusId,
      orderPaymentResponseCode: r.payment.responseCode,
      orderPaymentResponseMessage: r.payment.responseMessage,
      orderPaymentInstrument: r.payment.instrument,
      remarks: r.payment.remarks,
      totalAmount: moneyNumber(r.payment.amount),
      fee: moneyNumber(r.payment.fee),
    },
  };
}
