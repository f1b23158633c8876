/** Exact decimal string, e.g. "12500.00"; ISO 8601 date-time at UTC (the same as in graphql.ts, kept here to avoid a cycle). */
type Decimal = string;
type DateTimeISO = string;

/** AUTOMATIC: an approved payment is taken at once. MANUAL: it is held (the order Authorized, statusId 6) until captured or voided. */
export type CaptureMethod = 'AUTOMATIC' | 'MANUAL';

export interface CaptureOrderInput {
  reference: string;
  /** At most the amount authorized, at most two decimals; absent: all of it. */
  amount?: Decimal | null;
  /**
   * The same key with the same reference and amount answers the first capture again and captures
   * nothing more; with another reference or amount (or for a void), IDEMPOTENCY_KEY_REUSED. Per
   * environment, shared with voidOrder.
   */
  idempotencyKey?: string | null;
}

export interface VoidOrderInput {
  reference: string;
  /** The same key with the same reference answers the first void again; with another request, IDEMPOTENCY_KEY_REUSED. Per environment, shared with captureOrder. */
  idempotencyKey?: string | null;
}

/** PENDING: with the processor; SUCCEEDED and FAILED are final. */
export type RefundStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED';

/** Money given back on a paid order, in whole or in part. */
export interface GqlRefund {
  id: string;
  orderReference: string;
  amount: Decimal;
  currency: string;
  status: RefundStatus;
  /** The merchant's reason, as given. */
  reason: string | null;
  /** Why the processor refused it (FAILED only). */
  failureReason: string | null;
  createdAt: DateTimeISO;
  updatedAt: DateTimeISO;
}

export interface RefundOrderInput {
  reference: string;
  /** At most two decimal places; absent: all that remains of the balance. */
  amount?: Decimal | null;
  /** At most 500 characters. */
  reason?: string | null;
  /**
   * The same key with the same reference and amount answers the first refund again and refunds
   * nothing more; with another reference or amount, IDEMPOTENCY_KEY_REUSED. Per environment.
   */
  idempotencyKey?: string | null;
}

export const REFUND_FIELDS = 'id orderReference amount currency status reason failureReason createdAt updatedAt';
