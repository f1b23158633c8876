import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * What the payment engine asks of an acquirer. The sandbox is one provider; a live
 * acquirer plugs in behind the same interface.
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
}

export type ProcessorResult =
  | { kind: 'challenge'; token: string; issuer: string }
  | { kind: 'approved'; token: string; issuer: string; code: '00'; message: string }
  | { kind: 'declined'; token: string | null; issuer: string; code: string; message: string };

/**
 * Every call gets the engine's transaction: a processor that keeps state in this database
 * (the sandbox) must use it, since the embedded database has a single connection and the
 * engine holds it, with the order's row lock, for the whole transition. A remote acquirer
 * ignores it.
 */
export interface PaymentProcessor {
  readonly name: string;
  authorizeCard(request: CardAuthorizationRequest, tx: EntityManager): Promise<ProcessorResult>;
  /** Completes a 3-D Secure challenge with the one-time password the cardholder typed. */
  completeChallenge(token: string, otp: string, tx: EntityManager): Promise<Exclude<ProcessorResult, { kind: 'challenge' }>>;
  /** Starts a PayPal approval. */
  startPaypal(request: { amount: string; currency: string; reference: string; environmentId: number }, tx: EntityManager): Promise<{ token: string }>;
  completePaypal(token: string, approved: boolean, tx: EntityManager): Promise<Exclude<ProcessorResult, { kind: 'challenge' }>>;
  /** Charges a saved token without the cardholder (subscriptions). */
  chargeToken(token: string, amount: string, currency: string, reference: string, tx: EntityManager): Promise<Exclude<ProcessorResult, { kind: 'challenge' }>>;
}

/** Response codes the engine itself assigns. */
export const ResponseCodes = {
  approved: { code: '00', message: 'Approved' },
  pending: { code: '02', message: 'Pending authentication' },
  authenticationFailed: { code: 'Z1', message: 'Authentication failed' },
  authenticationExpired: { code: 'Z2', message: 'Authentication expired' },
  customerCancelled: { code: '17', message: 'Customer cancelled' },
  linkExhausted: { code: '61', message: 'Payment link limit reached' },
} as const;
