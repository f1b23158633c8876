import { DomainError } from '../shared/errors';
import type { EnvironmentMode } from '../merchants/app-environment.entity';

/**
 * What the payment engine asks of an acquirer. The sandbox is one provider; a live
 * acquirer plugs in behind the same interface.
 *
 * The engine never calls a processor while it holds a database transaction: it records the
 * attempt, commits, calls, then settles in a new transaction. Every call carries the
 * attempt's idempotency key: a repeated call with the same key must not move money twice
 * (it answers what the first call decided), and `lookup` tells what the processor did with
 * an attempt whose answer the engine never received (a crash between call and settlement).
 */
export interface CardAuthorizationRequest {
  /** Full number and security code: in memory only, for the duration of this call. */
  cardNumber: string;
  cvv: string;
  expiryMonth: string;
  expiryYear: string;
  amount: string;
  currency: string;
  reference: string;
  environmentId: number;
  /** false for links with AuthOption NOAUTH. */
  threeDSecure: boolean;
  idempotencyKey: string;
}

export interface PaypalRequest {
  amount: string;
  currency: string;
  reference: string;
  environmentId: number;
  idempotencyKey: string;
}

export type ProcessorResult =
  | { kind: 'challenge'; token: string; issuer: string }
  | { kind: 'approved'; token: string; issuer: string; code: '00'; message: string }
  | { kind: 'declined'; token: string | null; issuer: string; code: string; message: string };

export type FinalProcessorResult = Exclude<ProcessorResult, { kind: 'challenge' }>;

/** Gives back part or all of a settled payment, identified by the token the processor gave it. */
export interface RefundRequest {
  /** The processor's token of the payment refunded (null when it never gave one: refused). */
  paymentToken: string | null;
  amount: string;
  currency: string;
  /** The order's reference toward the processor. */
  reference: string;
  /** The refund's id: a repeated call refunds nothing more and answers the first decision. */
  idempotencyKey: string;
}

export type RefundResult = { kind: 'succeeded'; reference: string } | { kind: 'failed'; reference: string | null; reason: string };

/** A dispute's status in the processor's words. */
export type ProcessorDisputeStatus = 'needs_response' | 'won' | 'lost' | 'accepted';

/**
 * A notice of the processor about a dispute: opened by the cardholder's bank (`needs_response`),
 * or decided. Read by the dispute job until acknowledged, so a notice is applied at least once.
 */
export interface DisputeNotice {
  /** The processor's id of the dispute. */
  reference: string;
  /** The disputed order's reference toward the processor (its `processorReference`). */
  orderReference: string;
  /** Exact decimal string. */
  amount: string;
  currency: string;
  reason: string;
  evidenceDueBy: Date;
  status: ProcessorDisputeStatus;
}

/** The merchant's answer to a dispute: evidence, or (null) giving up. */
export interface DisputeAnswer {
  disputeReference: string;
  evidence: string | null;
  /** The engine's dispute id: the same answer sent again changes nothing. */
  idempotencyKey: string;
}

export interface PaymentProcessor {
  readonly name: string;
  authorizeCard(request: CardAuthorizationRequest): Promise<ProcessorResult>;
  /** Completes a 3-D Secure challenge with the one-time password the cardholder typed. */
  completeChallenge(idempotencyKey: string, token: string, otp: string): Promise<FinalProcessorResult>;
  /** Starts a PayPal approval: always a challenge (the approval page). */
  startPaypal(request: PaypalRequest): Promise<ProcessorResult>;
  completePaypal(idempotencyKey: string, token: string, approved: boolean): Promise<FinalProcessorResult>;
  /** Charges a saved token without the cardholder (subscriptions). */
  chargeToken(request: { token: string; amount: string; currency: string; reference: string; idempotencyKey: string }): Promise<FinalProcessorResult>;
  /**
   * Takes `amount` (at most what was authorized) of an approved authorization left uncaptured
   * (captureMethod MANUAL), once: a repeated call with the key answers the first decision.
   */
  capture(request: { token: string; amount: string; currency: string; idempotencyKey: string }): Promise<FinalProcessorResult>;
  /** Releases an approved authorization left uncaptured: nothing is taken. Idempotent by the key as capture is. */
  voidAuthorization(request: { token: string; idempotencyKey: string }): Promise<FinalProcessorResult>;
  /**
   * What the processor holds for an attempt (or a capture or void, by its key): its current state (a challenge still awaiting
   * the cardholder, or the final answer), or null when no call with this key reached it.
   */
  lookup(idempotencyKey: string): Promise<ProcessorResult | null>;
  /**
   * Closes a key no call has reached the processor with (a technical cancel): a call with the
   * key that arrives later is refused (declined, or a failed refund) and moves no money. Answers
   * false, closing nothing, when a call with the key had reached it already: that call's record
   * (`lookup`, `lookupRefund`) decides. The engine closes a key before it fails, at the deadline,
   * a call the processor has no record of, so a call still on its way cannot move money after
   * the engine told the merchant that none moved. With `expireChallenge` (the engine ending an
   * authentication: expired, or superseded), a challenge of the key still pending (3-D Secure,
   * PayPal) is declined too, with that code and message (the processor's record then says why), so
   * the cardholder can no longer complete it; false when it was completed already.
   */
  closeKey(idempotencyKey: string, options?: { expireChallenge?: ChallengeEnd }): Promise<boolean>;
  refund(request: RefundRequest): Promise<RefundResult>;
  /** What the processor decided for a refund call with this key, or null when none reached it. */
  lookupRefund(idempotencyKey: string): Promise<RefundResult | null>;
  /** The dispute notices not yet acknowledged, oldest first. */
  disputeNotices(limit: number): Promise<DisputeNotice[]>;
  /** The notice of this dispute in this status was applied: it is not given again. */
  acknowledgeDisputeNotice(reference: string, status: ProcessorDisputeStatus): Promise<void>;
  /** Hands the merchant's answer to the processor, which decides later (a notice). Idempotent by key. */
  answerDispute(answer: DisputeAnswer): Promise<void>;
}

/** Why the engine ends a challenge its cardholder did not finish: the decline the processor records for it. */
export interface ChallengeEnd {
  code: string;
  message: string;
}

/** Response codes the engine itself assigns. */
export const ResponseCodes = {
  approved: { code: '00', message: 'Approved' },
  pending: { code: '02', message: 'Pending authentication' },
  processing: { code: '09', message: 'Processing' },
  authenticationFailed: { code: 'Z1', message: 'Authentication failed' },
  authenticationExpired: { code: 'Z2', message: 'Authentication expired' },
  superseded: { code: 'Z3', message: 'Superseded by a newer payment attempt' },
  orderExpired: { code: 'Z4', message: 'Order expired unpaid' },
  notProcessed: { code: 'Z5', message: 'Payment not processed' },
  /** A renewal whose subscription was cancelled before its charge was sent: nothing was charged. */
  subscriptionCancelled: { code: 'Z5', message: 'Payment not processed: the subscription was cancelled' },
  authorized: { code: '00', message: 'Authorized: awaiting capture' },
  captured: { code: '00', message: 'Captured' },
  voided: { code: 'Z6', message: 'Authorization voided' },
  authorizationExpired: { code: 'Z7', message: 'Authorization expired uncaptured' },
  customerCancelled: { code: '17', message: 'Customer cancelled' },
  linkExhausted: { code: '61', message: 'Payment link limit reached' },
} as const;

/**
 * Real time, for the processor-call bookkeeping: how long an attempt has been with the
 * processor is a matter of wall-clock time for every instance alike.
 */
export function processorCallClock(): Date {
  return new Date();
}

/** The processor of each environment mode: the sandbox for test keys; live keys have none until one is configured. */
export interface PaymentProcessors {
  test: PaymentProcessor;
  live: PaymentProcessor | null;
}

/** What a payment (or a renewal) in a live environment is refused with while no live processor is configured. */
export function liveUnsupported(): DomainError {
  return new DomainError('unsupported', 'Live payments are currently not supported.', 'VAL400');
}

/** What an after-sale operation (a refund) answers in live mode while no live processor is configured. */
export function notAvailableInLiveMode(): DomainError {
  return new DomainError('unsupported', 'Not available in live mode: live mode has no acquirer yet.', 'NOT_AVAILABLE_IN_LIVE_MODE');
}

/**
 * The one choice of processor: the one of the environment's mode, for payments, page answers,
 * reconciliation and renewals alike. null when that mode has none (live without a processor).
 */
export function processorFor(processors: PaymentProcessors, mode: EnvironmentMode): PaymentProcessor | null {
  return mode === 'test' ? processors.test : processors.live;
}

/** processorFor, refusing (as an `unsupported` error, before anything is written) when the mode has none. */
export function requireProcessorFor(processors: PaymentProcessors, mode: EnvironmentMode): PaymentProcessor {
  const processor = processorFor(processors, mode);
  if (!processor) throw liveUnsupported();
  return processor;
}

/** What a payment, capture or void the processor never received ends with (`Z5`): no money moved. */
export const NOT_PROCESSED: FinalProcessorResult = { kind: 'declined', token: null, issuer: '', ...ResponseCodes.notProcessed };

/**
 * What became of a call whose answer the engine never got, from the processor's record of its key
 * (`lookup`): the record when there is one; with none once the deadline has passed (`overdue`),
 * `neverReached`: the key is closed first, so the call can no longer reach the processor, and no
 * money moved (a record written meanwhile is answered instead); with none before the deadline,
 * null: the call may still be on its way.
 */
export async function recordOfKey<R>(
  processor: Pick<PaymentProcessor, 'closeKey'>,
  key: string,
  lookup: (key: string) => Promise<R | null>,
  overdue: boolean,
  neverReached: R,
): Promise<R | null> {
  const record = await lookup(key);
  if (record !== null || !overdue) return record;
  if (await processor.closeKey(key)) return neverReached;
  const arrived = await lookup(key);
  if (arrived === null) throw new Error('processor: a key it would not close has no record');
  return arrived;
}
