import { DomainError, requiredField, validationError } from '../shared/errors';
import { parseAmount, type Money } from '../shared/money';
import { idempotencyKeyReused as keyReused, readIdempotencyKey } from '../shared/idempotency-key';

/** A refund as asked for: the order, the amount (absent: all that remains), why, and the caller's idempotency key. */
export interface RefundOrderInput {
  reference?: string | null;
  amount?: unknown;
  reason?: string | null;
  idempotencyKey?: string | null;
}

/** The same, checked. */
export interface RefundRequestInput {
  reference: string;
  amount: Money | null;
  reason: string | null;
  idempotencyKey: string | null;
}

export const MAX_REFUND_REASON_LENGTH = 500;

/** The order is not one a refund may be asked of (not paid, or a dispute on it is open). */
export const refundNotAllowed = (message: string): DomainError => new DomainError('conflict', message, 'REFUND_NOT_ALLOWED');
/** Zero, negative, more than two decimals, or more than the balance. */
export const refundAmountInvalid = (message: string): DomainError => new DomainError('validation', message, 'REFUND_AMOUNT_INVALID');
/** The idempotency key was used before with another order or amount. */
export const idempotencyKeyReused = (): DomainError => keyReused('a refund');

/** Checks a refund request before anything is read or written. */
export function readRefundInput(input: RefundOrderInput): RefundRequestInput {
  const reference = typeof input.reference === 'string' ? input.reference.trim() : '';
  if (!reference) throw requiredField('reference');
  let amount: Money | null = null;
  if (input.amount !== undefined && input.amount !== null) {
    const parsed = parseAmount(input.amount, 2);
    if (parsed === 'not_positive') throw refundAmountInvalid('The amount must be greater than zero.');
    if (parsed === 'too_precise') throw refundAmountInvalid('The amount must have at most 2 decimal places.');
    if (typeof parsed === 'string') throw refundAmountInvalid('The amount must be a decimal number of at most 999999999999.99.');
    amount = parsed;
  }
  const reason = typeof input.reason === 'string' && input.reason.trim() ? input.reason.trim() : null;
  if (reason && reason.length > MAX_REFUND_REASON_LENGTH) throw validationError(`The reason must be at most ${MAX_REFUND_REASON_LENGTH} characters.`);
  const idempotencyKey = readIdempotencyKey(input.idempotencyKey);
  return { reference, amount, reason, idempotencyKey };
}
