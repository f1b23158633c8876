import { OrderStatus, type OrderStatusId } from '../orders/order-status';
import type { Order } from '../orders/order.entity';
import type { OrderPayment } from '../orders/order-payment.entity';
import type { CardDetail } from '../orders/card-detail.entity';
import { TimelineEvents } from '../timeline/timeline.service';
import { PAYMENT_OPTION_IDS, PAYMENT_OPTION_NAMES as PAYMENT_OPTION_LABELS } from '../shared/payment-options';
import { processorCallClock, ResponseCodes, type FinalProcessorResult, type ProcessorResult } from './processor';
import { transition, type PaymentActor, type PaymentMethod } from './payment-state';
import { randomReference } from '../shared/random';

/**
 * What happens to an attempt's rows, decided on the rows themselves: managed entities (the
 * entity manager writes the changes at its flush) or plain rows (the money path's plain SQL
 * writes them). Every status change goes through `transition` (payment-state.ts); the callers
 * (settlement.ts and plain-settlement.ts) only load, lock and store.
 */

/** A timeline entry to append (system source), in the order given. */
export interface TimelineEntry {
  event: string;
  description: string;
  metadata: Record<string, unknown> | null;
}

/** The order's columns an attempt changes. */
export type AttemptOrder = Pick<
  Order,
  | 'statusId'
  | 'paymentMethod'
  | 'paymentResponseCode'
  | 'paymentResponseMessage'
  | 'providerResponseDate'
  | 'datePaymentConfirmed'
  | 'authorizedAt'
  | 'authorizedAmount'
  | 'amount'
  | 'captureMethod'
  | 'totalChargedAmount'
  | 'fee'
>;

/** The payment's columns an attempt changes. */
export type AttemptPayment = Pick<
  OrderPayment,
  'statusId' | 'reference' | 'paymentOptionId' | 'responseCode' | 'responseMessage' | 'processorToken' | 'authenticationExpiresAt' | 'processingStartedAt'
>;

export type AttemptCard = Pick<CardDetail, 'cardToken' | 'cardIssuer' | 'status'>;

/** The new payment's columns when an Initiated order's attempt starts: the order moves to Processing (by `actor`). */
export function startAttempt(order: AttemptOrder, start: { method: PaymentMethod; actor: 'pay_request' | 'renewal'; instrument: string }) {
  transition(order, OrderStatus.Processing, start.actor, start.method);
  order.paymentMethod = start.method;
  order.paymentResponseCode = ResponseCodes.processing.code;
  order.paymentResponseMessage = ResponseCodes.processing.message;
  return {
    reference: randomReference('OP', 20),
    paymentOptionId: PAYMENT_OPTION_IDS[start.method]!,
    paymentOption: PAYMENT_OPTION_LABELS[start.method]!,
    statusId: OrderStatus.Processing,
    responseCode: ResponseCodes.processing.code,
    responseMessage: ResponseCodes.processing.message,
    amount: order.totalChargedAmount,
    fee: order.fee,
    processorToken: null,
    processingStartedAt: processorCallClock(),
    instrument: start.instrument,
  };
}

/** The timeline entry of an attempt that started. */
export function attemptStartedEntry(method: PaymentMethod, paymentReference: string): TimelineEntry {
  return {
    event: TimelineEvents.paymentInitiated,
    description: `${PAYMENT_OPTION_LABELS[method]} started`,
    metadata: { orderPaymentReference: paymentReference },
  };
}

/** An authentication page's answer goes to the processor (or the engine closes its challenge there): the attempt is Processing again. */
export function resumeAttemptRows(order: AttemptOrder, payment: AttemptPayment, actor: ResumeActor, method: PaymentMethod | null): void {
  transition(payment, OrderStatus.Processing, actor, method);
  transition(order, OrderStatus.Processing, actor, method);
  payment.processingStartedAt = processorCallClock();
}

/** The engine could not close a claimed attempt's challenge at the processor (unreachable): the attempt awaits its cardholder again. */
export function releaseClaimRows(order: AttemptOrder, payment: AttemptPayment, actor: 'expiry' | 'supersede', method: PaymentMethod | null): void {
  transition(payment, OrderStatus.PendingAuthentication, actor, method);
  transition(order, OrderStatus.PendingAuthentication, actor, method);
  payment.processingStartedAt = null;
}

/** Who sends an unauthenticated attempt back to the processor: its page, reconciliation, or the engine ending it (expiry, supersession). */
export type ResumeActor = 'otp_page' | 'paypal_page' | 'reconciliation' | 'expiry' | 'supersede';

/** What the processor's answer carries for every kind of answer: its token and the card's issuer, kept once given. */
export function takeProcessorDetails(payment: AttemptPayment, card: AttemptCard | null, result: ProcessorResult): void {
  if (card && result.token !== null && !card.cardToken) card.cardToken = result.token;
  if (card && result.issuer && !card.cardIssuer) card.cardIssuer = result.issuer;
  if (result.token && !payment.processorToken) payment.processorToken = result.token;
  payment.processingStartedAt = null;
}

/** The processor asks for authentication: order and payment PendingAuthentication until `expiresAt` (kept when already set). */
export function awaitAuthentication(order: AttemptOrder, payment: AttemptPayment, actor: PaymentActor, method: PaymentMethod | null, expiresAt: Date): void {
  transition(payment, OrderStatus.PendingAuthentication, actor, method);
  transition(order, OrderStatus.PendingAuthentication, actor, method);
  payment.responseCode = ResponseCodes.pending.code;
  payment.responseMessage = ResponseCodes.pending.message;
  payment.authenticationExpiresAt ??= expiresAt;
  order.paymentResponseCode = ResponseCodes.pending.code;
  order.paymentResponseMessage = ResponseCodes.pending.message;
}

/** The timeline entry of the answer to an authentication page (none for a first call that needed no authentication). */
export function authenticationEntry(payment: AttemptPayment, final: FinalProcessorResult): TimelineEntry | null {
  if (payment.authenticationExpiresAt === null) return null;
  const passed = ![
    ResponseCodes.authenticationFailed.code,
    ResponseCodes.authenticationExpired.code,
    ResponseCodes.superseded.code,
    ResponseCodes.customerCancelled.code,
  ].includes(final.code as never);
  return {
    event: passed ? TimelineEvents.authenticationPassed : TimelineEvents.authenticationFailed,
    description: passed ? 'Customer authenticated' : final.message,
    metadata: { orderPaymentReference: payment.reference },
  };
}

/**
 * An attempt ends (or, with no payment, an order that had none): the order and its payment
 * Successful, Failed, or (an approved payment of an order captured later) Authorized. Answers
 * whether it is held and approved, and the timeline entry of the ending.
 */
export function endAttempt(
  order: AttemptOrder,
  payment: AttemptPayment | null,
  card: AttemptCard | null,
  result: FinalProcessorResult,
  actor: PaymentActor,
  method: PaymentMethod | null,
  now: Date,
): { held: boolean; approved: boolean; entry: TimelineEntry } {
  const approved = result.kind === 'approved';
  // An approved payment of an order captured later is held, not taken (docs/capture.md).
  const held = approved && payment !== null && order.captureMethod === 'MANUAL';
  const statusId: OrderStatusId = held ? OrderStatus.Authorized : approved ? OrderStatus.Successful : OrderStatus.Failed;
  const answer = held ? ResponseCodes.authorized : result;
  if (payment) transition(payment, statusId, actor, method);
  transition(order, statusId, actor, method);
  if (payment) {
    payment.responseCode = answer.code;
    payment.responseMessage = answer.message;
    payment.authenticationExpiresAt = null;
    payment.processingStartedAt = null;
  }
  order.paymentResponseCode = answer.code;
  order.paymentResponseMessage = answer.message;
  order.providerResponseDate = now;
  if (held) {
    order.authorizedAt = now;
    order.authorizedAmount = order.amount;
  } else if (approved) order.datePaymentConfirmed = now;
  if (card) card.status = approved;
  const entry: TimelineEntry = held
    ? {
        event: TimelineEvents.authorized,
        description: 'Payment authorized: the money is held until the merchant captures it',
        metadata: { responseCode: result.code, amount: order.totalChargedAmount },
      }
    : {
        event: approved ? TimelineEvents.settled : TimelineEvents.failed,
        description: approved ? 'Payment successful' : `Payment failed: ${result.message}`,
        metadata: { responseCode: result.code },
      };
  return { held, approved, entry };
}
