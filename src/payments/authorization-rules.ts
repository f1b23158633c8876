import { OrderStatus } from '../orders/order-status';
import type { Order } from '../orders/order.entity';
import type { OrderPayment } from '../orders/order-payment.entity';
import { Money, parseAmount, type AmountProblem } from '../shared/money';
import { DomainError } from '../shared/errors';
import { AuditActions, SYSTEM_ACTOR, type AuditOrigin, type AuditRecord } from '../merchants/audit/audit.service';
import type { EnvironmentMode } from '../merchants/app-environment.entity';
import { TimelineEvents } from '../timeline/timeline.service';
import { ResponseCodes, type FinalProcessorResult } from './processor';
import { canTransition, methodOfOption, transition, type PaymentMethod } from './payment-state';
import type { TimelineEntry } from './attempt-rules';
import type { AuthorizationAction, AuthorizationActionKind, CaptureQuote } from './authorization-action.entity';

/*
 * What a capture or a void does to an Authorized order's rows, decided on the rows themselves
 * (plain rows read by authorization.queries.ts; capture.service.ts only reads, locks and writes).
 * Every status change goes through `transition` (payment-state.ts).
 */

export const captureAmountInvalid = (message: string) => new DomainError('validation', message, 'CAPTURE_AMOUNT_INVALID');

/** A merchant's key and the request it came with. */
export interface KeyedRequest {
  key: string;
  kind: AuthorizationActionKind;
  reference: string;
  /** As asked (null: all that was authorized; always null for a void). */
  amount: Money | null;
}

/** Whether a key's earlier action was asked by the same request: the same operation, order and amount as asked (a missing amount matches only a missing amount). */
export function sameKeyedRequest(earlier: AuthorizationAction, keyed: KeyedRequest): boolean {
  const asked = earlier.requestedAmount === null ? null : new Money(earlier.requestedAmount);
  const sameAmount = asked === null ? keyed.amount === null : keyed.amount !== null && asked.eq(keyed.amount);
  return earlier.kind === keyed.kind && earlier.order.reference === keyed.reference && sameAmount;
}

const AMOUNT_PROBLEMS: Record<AmountProblem, string> = {
  invalid: 'The amount must be a number.',
  not_positive: 'The amount must be greater than zero.',
  too_large: 'The amount must be at most the amount authorized.',
  too_precise: 'The amount must have at most 2 decimal places.',
};

/** The amount asked for: null when none is given, else a positive amount of at most two decimals. */
export function requestedCaptureAmount(value: string | null | undefined): Money | null {
  if (value === undefined || value === null) return null;
  const parsed = parseAmount(value, 2);
  if (typeof parsed === 'string') throw captureAmountInvalid(AMOUNT_PROBLEMS[parsed]);
  return parsed;
}

/** The amount to capture: all of `authorized` when none is given, else a positive amount of at most two decimals, at most `authorized`. */
export function captureAmount(value: string | null | undefined, authorized: string): Money {
  const parsed = requestedCaptureAmount(value);
  if (parsed === null) return new Money(authorized);
  if (parsed.gt(authorized)) throw captureAmountInvalid(`The amount must be at most the amount authorized (${new Money(authorized).toFixed(2)}).`);
  return parsed;
}

/**
 * The fee terms of a capture: those the customer authorized, whatever the merchant's settings
 * became since (who bears the fee, the rule). Capturing all of it keeps the order's own figures;
 * capturing part takes the fee of that part (`partFee`, from the merchant's rule), never more
 * than the order's fee, borne by whoever bore the order's. So a capture never asks the card for
 * more than the authorization holds.
 */
export function captureQuote(
  order: Pick<Order, 'amount' | 'fee' | 'feeRate' | 'subsidiaryFee' | 'customerFee' | 'totalChargedAmount'>,
  amount: Money,
  partFee: Money,
): CaptureQuote {
  if (amount.eq(order.amount)) {
    return {
      fee: order.fee,
      feeRate: order.feeRate ?? '0',
      subsidiaryFee: order.subsidiaryFee,
      customerFee: order.customerFee,
      totalChargedAmount: order.totalChargedAmount,
    };
  }
  const fee = Money.min(partFee, new Money(order.fee));
  const customerBears = new Money(order.customerFee).gt(0);
  const customerFee = customerBears ? fee : new Money(0);
  return {
    fee: fee.toFixed(2),
    feeRate: order.feeRate ?? '0',
    subsidiaryFee: (customerBears ? new Money(0) : fee).toFixed(2),
    customerFee: customerFee.toFixed(2),
    totalChargedAmount: amount.plus(customerFee).toFixed(2),
  };
}

/** Who asks for a capture or a void, as the transitions table names them. */
export type ActionActor = 'capture' | 'void' | 'expiry';

/**
 * Why a capture or void of `order` cannot be claimed (its order locked by the caller), or null
 * when it can: the transitions table allows the change from the order's status, for the method
 * of its Authorized payment (`payment`: null when it has none), which holds a processor token;
 * and a capture comes before the authorization's end (`expiresAt`: authorized at plus
 * AUTHORIZATION_TTL_HOURS). Past it the hold is the clock's to release (a void, by the expiry
 * job or the merchant), never money to take, whether or not the job has run yet.
 */
export function claimRefusal(
  order: Pick<Order, 'statusId' | 'authorizedAt'>,
  payment: Pick<OrderPayment, 'processorToken' | 'paymentOptionId'> | null,
  kind: AuthorizationActionKind,
  actor: ActionActor,
  expiry: { now: Date; ttlMs: number },
): string | null {
  const method = payment ? methodOfOption(payment.paymentOptionId) : null;
  const target = kind === 'capture' ? OrderStatus.Successful : OrderStatus.Voided;
  const what = kind === 'capture' ? 'captured' : 'voided';
  if (!payment?.processorToken || !canTransition(order.statusId, target, actor, method))
    return `Only an Authorized order can be ${what}; this one is ${order.statusId === OrderStatus.Successful ? 'captured' : 'not Authorized'}.`;
  const expiresAt = order.authorizedAt ? new Date(order.authorizedAt.getTime() + expiry.ttlMs) : null;
  if (kind === 'capture' && expiresAt && expiry.now >= expiresAt)
    return `The authorization expired at ${expiresAt.toISOString()} (AUTHORIZATION_TTL_HOURS after it was made); it can no longer be captured, only voided.`;
  return null;
}

/** The columns of the order a settled capture or void changes. */
export type SettledOrder = Pick<
  Order,
  | 'statusId'
  | 'amount'
  | 'fee'
  | 'feeRate'
  | 'subsidiaryFee'
  | 'customerFee'
  | 'totalChargedAmount'
  | 'currency'
  | 'providerResponseDate'
  | 'datePaymentConfirmed'
  | 'paymentResponseCode'
  | 'paymentResponseMessage'
>;

/** What a settled action leaves to announce: the outcome of a confirmed one (its event and metrics), none for a refused one. */
export interface ActionSettled {
  entry: TimelineEntry;
  /** null: refused by the processor, the order unchanged (no event). */
  outcome: { method: PaymentMethod | null; status: 'successful' | 'voided'; code: string; actor: ActionActor } | null;
}

/**
 * The processor's answer to a pending capture or void of an Authorized order (its rows locked by
 * the caller). Confirmed: a capture makes the order Successful for the amount captured, its fee
 * the one computed on that amount; a void (or an expiry) makes it Voided. Refused: the order
 * stays Authorized and the action failed.
 */
export function settleActionRows(
  order: SettledOrder,
  payment: Pick<OrderPayment, 'statusId' | 'paymentOptionId' | 'responseCode' | 'responseMessage'>,
  action: Pick<AuthorizationAction, 'kind' | 'actor' | 'amount' | 'quote' | 'state' | 'responseCode' | 'responseMessage' | 'settledAt'>,
  result: FinalProcessorResult,
  now: Date,
): ActionSettled {
  const method = methodOfOption(payment.paymentOptionId);
  action.responseCode = result.code;
  action.responseMessage = result.message;
  action.settledAt = now;
  if (result.kind !== 'approved') {
    action.state = 'failed';
    return {
      entry: {
        event: TimelineEvents.authorizationActionFailed,
        description: `The ${action.kind} was refused: ${result.message}`,
        metadata: { kind: action.kind, responseCode: result.code },
      },
      outcome: null,
    };
  }
  action.state = 'succeeded';
  order.providerResponseDate = now;
  if (action.kind === 'capture') {
    transition(payment, OrderStatus.Successful, 'capture', method);
    transition(order, OrderStatus.Successful, 'capture', method);
    const quote = action.quote!;
    const captured = new Money(action.amount!).toFixed(2);
    Object.assign(order, { amount: captured, ...quote });
    order.datePaymentConfirmed = now;
    payment.responseCode = order.paymentResponseCode = ResponseCodes.captured.code;
    payment.responseMessage = order.paymentResponseMessage = ResponseCodes.captured.message;
    return {
      entry: {
        event: TimelineEvents.captured,
        description: `Captured ${captured} ${order.currency}`,
        metadata: { amount: captured, totalChargedAmount: quote.totalChargedAmount, fee: quote.fee },
      },
      outcome: { method, status: 'successful', code: result.code, actor: 'capture' },
    };
  }
  const actor = action.actor === 'expiry' ? 'expiry' : 'void';
  transition(payment, OrderStatus.Voided, actor, method);
  transition(order, OrderStatus.Voided, actor, method);
  const answer = actor === 'expiry' ? ResponseCodes.authorizationExpired : ResponseCodes.voided;
  payment.responseCode = order.paymentResponseCode = answer.code;
  payment.responseMessage = order.paymentResponseMessage = answer.message;
  return {
    entry: {
      event: TimelineEvents.voided,
      description: actor === 'expiry' ? 'Authorization released: not captured in time' : 'Authorization released by the merchant',
      metadata: null,
    },
    outcome: { method, status: 'voided', code: answer.code, actor },
  };
}

/** The audit entry of a confirmed capture or void (`origin` null: the clock's or the reconciliation's, by the system). */
export function settledAuditEntry(
  locked: { order: Pick<Order, 'reference' | 'currency'>; action: Pick<AuthorizationAction, 'kind' | 'amount'>; subsidiaryId: number; mode: EnvironmentMode },
  origin: AuditOrigin | null,
): AuditRecord {
  const { order, action } = locked;
  return {
    ...(origin ?? { actor: SYSTEM_ACTOR }),
    action: action.kind === 'capture' ? AuditActions.orderCaptured : AuditActions.orderVoided,
    subsidiaryId: locked.subsidiaryId,
    environment: locked.mode,
    target: action.kind === 'capture' ? `order ${order.reference} ${new Money(action.amount!).toFixed(2)} ${order.currency}` : `order ${order.reference}`,
  };
}
