import { DomainError, validationError } from './errors';

/**
 * The one rule of a caller's idempotency key, whoever carries it (the REST Idempotency-Key
 * header, the GraphQL `idempotencyKey` of refunds, captures and voids): 1 to 255 visible ASCII
 * characters.
 */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Whether `key` follows the rule. */
export function isIdempotencyKey(key: string): boolean {
  return IDEMPOTENCY_KEY_PATTERN.test(key);
}

/** An `idempotencyKey` input field: null when absent, else the key as given, refused when it breaks the rule. */
export function readIdempotencyKey(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  if (!isIdempotencyKey(value)) throw validationError('The idempotencyKey must be 1 to 255 visible ASCII characters.');
  return value;
}

/** A key used before with other parameters (another order, amount or operation): `what` names what it was used for. */
export const idempotencyKeyReused = (what: string): DomainError =>
  new DomainError('conflict', `This idempotencyKey was already used for ${what} of another order or amount.`, 'IDEMPOTENCY_KEY_REUSED');
