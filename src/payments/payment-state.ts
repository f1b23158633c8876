import { DomainError } from '../shared/errors';
import { OrderStatus, type OrderStatusId } from '../orders/order-status';

/**
 * Who may move a payment (and its order), with which proof:
 * - `pay_request`: an order/pay request authenticated with the merchant's key, or the hosted
 *   payment-link page; proof: a valid instrument for an order nobody is paying yet;
 * - `processor`: the processor's answer to a call the engine made for the attempt;
 * - `otp_page`: the cardholder on the 3-D Secure page; proof: a one-time password, for card payments only;
 * - `paypal_page`: the payer on the PayPal page; proof: a decision, for PayPal payments only;
 * - `expiry`: the clock; proof: the deadline of the authentication (or of the unpaid order) has passed.
 *   An authentication it ends is claimed first (Pending → Processing, under the attempt's locks), then
 *   settled by the processor's close of its challenge (or by the answer the processor already had),
 *   or released (back to Pending) when the processor could not be reached to close it;
 * - `supersede`: a newer attempt on the same link that can be used up; proof: the older attempt is
 *   still unauthenticated and nobody is answering it at this moment. It is claimed and settled as
 *   `expiry` does;
 * - `reconciliation`: the processor's own record of an attempt whose answer was lost (a crash
 *   between the call and its settlement), looked up by the attempt's idempotency key;
 * - `renewal`: the billing job charging a subscription's saved card; proof: the subscription is
 *   active and due, and its renewal order is new (Initiated), for card payments only;
 * - `capture`: the merchant's captureOrder (payments.write) of an Authorized order; proof: the
 *   processor confirmed the capture call (or its record of the call, on reconciliation);
 * - `void`: the merchant's voidOrder (payments.write) of an Authorized order; proof: the
 *   processor confirmed the release.
 * `processor` and `reconciliation` leave an approved payment Authorized instead of Successful when
 * its order is captured later (captureMethod MANUAL); `expiry` releases an authorization nobody
 * captured within AUTHORIZATION_TTL_HOURS (proof: that time has passed, and the processor confirmed).
 */
export type PaymentActor =
  'pay_request' | 'processor' | 'otp_page' | 'paypal_page' | 'expiry' | 'supersede' | 'reconciliation' | 'renewal' | 'capture' | 'void';

export type PaymentMethod = 'C' | 'PAYPAL';

export interface PaymentTransition {
  from: OrderStatusId;
  to: OrderStatusId;
  actor: PaymentActor;
  /** Only payments of these methods; every method when absent. */
  methods?: readonly PaymentMethod[];
}

const { Initiated, PendingAuthentication, Processing, Failed, Successful, Authorized, Voided } = OrderStatus;

/**
 * The one table of allowed transitions. Successful, Failed and Voided are final. No page can settle a
 * payment: a page only hands its proof to the processor (Pending → Processing), and only the
 * processor's answer (or its record of the attempt) makes a payment Successful or Authorized. An
 * Authorized payment leaves that state once: captured (Successful) or released (Voided).
 */
export const PAYMENT_TRANSITIONS: readonly PaymentTransition[] = [
  { from: Initiated, to: Processing, actor: 'pay_request' },
  { from: Initiated, to: Processing, actor: 'renewal', methods: ['C'] },
  { from: Initiated, to: Failed, actor: 'expiry' },
  { from: Processing, to: PendingAuthentication, actor: 'processor' },
  { from: Processing, to: Successful, actor: 'processor' },
  { from: Processing, to: Failed, actor: 'processor' },
  { from: Processing, to: PendingAuthentication, actor: 'reconciliation' },
  { from: Processing, to: Successful, actor: 'reconciliation' },
  { from: Processing, to: Failed, actor: 'reconciliation' },
  { from: PendingAuthentication, to: Processing, actor: 'otp_page', methods: ['C'] },
  { from: PendingAuthentication, to: Processing, actor: 'paypal_page', methods: ['PAYPAL'] },
  // At its deadline the processor already holds the cardholder's answer (a page's call whose response was lost): its record settles it.
  { from: PendingAuthentication, to: Processing, actor: 'reconciliation' },
  // Ending an authentication before its cardholder did: claimed, so that a page answered meanwhile waits; the processor then settles it.
  { from: PendingAuthentication, to: Processing, actor: 'expiry' },
  { from: PendingAuthentication, to: Processing, actor: 'supersede' },
  // ... and released when the processor could not be reached to close its challenge.
  { from: Processing, to: PendingAuthentication, actor: 'expiry' },
  { from: Processing, to: PendingAuthentication, actor: 'supersede' },
  // Capture later (docs/capture.md): an approved payment of a MANUAL order is held, then taken or released, once.
  { from: Processing, to: Authorized, actor: 'processor' },
  { from: Processing, to: Authorized, actor: 'reconciliation' },
  { from: Authorized, to: Successful, actor: 'capture' },
  { from: Authorized, to: Voided, actor: 'void' },
  { from: Authorized, to: Voided, actor: 'expiry' },
];

export function canTransition(from: number, to: number, actor: PaymentActor, method: PaymentMethod | null): boolean {
  return PAYMENT_TRANSITIONS.some(
    (t) => t.from === from && t.to === to && t.actor === actor && (!t.methods || (method !== null && t.methods.includes(method))),
  );
}

export class PaymentTransitionError extends DomainError {
  constructor(
    readonly from: number,
    readonly to: number,
    readonly actor: PaymentActor,
  ) {
    super('conflict', 'This payment cannot change that way.', 'VAL400');
    this.name = 'PaymentTransitionError';
  }
}

/** Moves `target` (an order or one of its payments) to `to`, or throws when the table does not allow it. */
export function transition(target: { statusId: number }, to: OrderStatusId, actor: PaymentActor, method: PaymentMethod | null): void {
  if (!canTransition(target.statusId, to, actor, method)) throw new PaymentTransitionError(target.statusId, to, actor);
  target.statusId = to;
}

/** The method of a payment attempt, from its option id (2 card, 3 PayPal). */
export function methodOfOption(paymentOptionId: number): PaymentMethod | null {
  return paymentOptionId === 2 ? 'C' : paymentOptionId === 3 ? 'PAYPAL' : null;
}

/** A refund's status: PENDING while the processor has it; SUCCEEDED and FAILED are final. */
export type RefundStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

/**
 * Who may move a refund, with which proof:
 * - `refund_request`: a caller allowed `payments.write` (authorization.ts); proof: the order is
 *   Successful and the amount fits its balance, both read under the order's row lock;
 * - `processor`: the processor's answer to the refund call the engine made (keyed by the refund's id);
 * - `reconciliation`: the processor's own record of a refund whose answer was lost (a crash
 *   between the call and its settlement), looked up by the refund's id; or, once the processor
 *   deadline has passed with no record at all, the proof that the call never reached it.
 */
export type RefundActor = 'refund_request' | 'processor' | 'reconciliation';

export interface RefundTransition {
  /** null: the refund does not exist yet (it is created by this transition). */
  from: RefundStatus | null;
  to: RefundStatus;
  actor: RefundActor;
}

/**
 * The one table of refund transitions, beside the payments' own. A refund is created PENDING by a
 * request and settled only by the processor (or its record); nothing moves a settled refund.
 */
export const REFUND_TRANSITIONS: readonly RefundTransition[] = [
  { from: null, to: 'PENDING', actor: 'refund_request' },
  { from: 'PENDING', to: 'SUCCEEDED', actor: 'processor' },
  { from: 'PENDING', to: 'FAILED', actor: 'processor' },
  { from: 'PENDING', to: 'SUCCEEDED', actor: 'reconciliation' },
  { from: 'PENDING', to: 'FAILED', actor: 'reconciliation' },
];

/** The order statuses a refund may be asked of: only a paid order (money was taken). */
export const REFUNDABLE_ORDER_STATUSES: readonly OrderStatusId[] = [Successful];

export function canTransitionRefund(from: RefundStatus | null, to: RefundStatus, actor: RefundActor): boolean {
  return REFUND_TRANSITIONS.some((t) => t.from === from && t.to === to && t.actor === actor);
}

export class RefundTransitionError extends DomainError {
  constructor(
    readonly from: RefundStatus | null,
    readonly to: RefundStatus,
    readonly actor: RefundActor,
  ) {
    super('conflict', 'This refund cannot change that way.', 'VAL400');
    this.name = 'RefundTransitionError';
  }
}

/** The status a new refund starts in when `actor` creates it, or throws when the table lets that actor create none. */
export function newRefundStatus(actor: RefundActor): RefundStatus {
  const created = REFUND_TRANSITIONS.find((t) => t.from === null && t.actor === actor);
  if (!created) throw new RefundTransitionError(null, 'PENDING', actor);
  return created.to;
}

/** Moves a refund to `to`, or throws when the table does not allow it. */
export function transitionRefund(target: { status: RefundStatus }, to: RefundStatus, actor: RefundActor): void {
  if (!canTransitionRefund(target.status, to, actor)) throw new RefundTransitionError(target.status, to, actor);
  target.status = to;
}

/**
 * A dispute's status: NEEDS_RESPONSE while the merchant may answer (before `evidenceDueBy`);
 * UNDER_REVIEW once evidence went in; WON, LOST and ACCEPTED are final.
 */
export type DisputeStatus = 'NEEDS_RESPONSE' | 'UNDER_REVIEW' | 'WON' | 'LOST' | 'ACCEPTED';

/**
 * Who may move a dispute, with which proof:
 * - `processor`: the processor's notice of the dispute (opened by the cardholder's bank) or of
 *   its decision, read from the processor by the dispute job and applied once (keyed by the
 *   processor's dispute reference and status);
 * - `merchant`: a caller allowed `payments.write` (authorization.ts) answering before the
 *   deadline: evidence, or giving up; proof: the dispute still NEEDS_RESPONSE under its row lock;
 * - `expiry`: the clock; proof: `evidenceDueBy` has passed with no answer.
 */
export type DisputeActor = 'processor' | 'merchant' | 'expiry';

export interface DisputeTransition {
  /** null: the dispute does not exist yet (it is created by this transition). */
  from: DisputeStatus | null;
  to: DisputeStatus;
  actor: DisputeActor;
}

/**
 * The one table of dispute transitions. Only the processor opens a dispute and decides one under
 * review; the merchant answers once, while it needs a response: evidence (the processor then
 * decides) or acceptance. Accepting after evidence went in is not offered (as at Stripe, where a
 * dispute may be closed only while it needs a response): the decision is then the processor's.
 */
export const DISPUTE_TRANSITIONS: readonly DisputeTransition[] = [
  { from: null, to: 'NEEDS_RESPONSE', actor: 'processor' },
  { from: 'NEEDS_RESPONSE', to: 'UNDER_REVIEW', actor: 'merchant' },
  { from: 'NEEDS_RESPONSE', to: 'ACCEPTED', actor: 'merchant' },
  { from: 'NEEDS_RESPONSE', to: 'LOST', actor: 'expiry' },
  // The issuer may decide before any answer (a cardholder who withdraws, a chargeback it upholds).
  { from: 'NEEDS_RESPONSE', to: 'WON', actor: 'processor' },
  { from: 'NEEDS_RESPONSE', to: 'LOST', actor: 'processor' },
  { from: 'UNDER_REVIEW', to: 'WON', actor: 'processor' },
  { from: 'UNDER_REVIEW', to: 'LOST', actor: 'processor' },
];

/** Disputes that hold the order's money: no refund while one of these is on the order. */
export const OPEN_DISPUTE_STATUSES: readonly DisputeStatus[] = ['NEEDS_RESPONSE', 'UNDER_REVIEW'];

export function canTransitionDispute(from: DisputeStatus | null, to: DisputeStatus, actor: DisputeActor): boolean {
  return DISPUTE_TRANSITIONS.some((t) => t.from === from && t.to === to && t.actor === actor);
}

export class DisputeTransitionError extends DomainError {
  constructor(
    readonly from: DisputeStatus | null,
    readonly to: DisputeStatus,
    readonly actor: DisputeActor,
  ) {
    super(
      'conflict',
      from === null ? 'This dispute cannot be opened that way.' : `This dispute is ${from}: it cannot become ${to} that way.`,
      actor === 'merchant' ? 'DISPUTE_NOT_OPEN' : 'VAL400',
    );
    this.name = 'DisputeTransitionError';
  }
}

/** The status a new dispute starts in when `actor` opens it, or throws when the table lets that actor open none. */
export function newDisputeStatus(actor: DisputeActor): DisputeStatus {
  const opened = DISPUTE_TRANSITIONS.find((t) => t.from === null && t.actor === actor);
  if (!opened) throw new DisputeTransitionError(null, 'NEEDS_RESPONSE', actor);
  return opened.to;
}

/** Moves a dispute to `to`, or throws when the table does not allow it. */
export function transitionDispute(target: { status: DisputeStatus }, to: DisputeStatus, actor: DisputeActor): void {
  if (!canTransitionDispute(target.status, to, actor)) throw new DisputeTransitionError(target.status, to, actor);
  target.status = to;
}
