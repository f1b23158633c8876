/** Exact decimal string, e.g. "1000.00"; ISO 8601 date-time at UTC (the same as in graphql.ts, kept here to avoid a cycle). */
type Decimal = string;
type DateTimeISO = string;

/**
 * NEEDS_RESPONSE: the merchant may answer (evidence or accept) until `evidenceDueBy`;
 * UNDER_REVIEW: evidence went in and the processor decides; WON, LOST and ACCEPTED are final.
 */
export type DisputeStatus = 'NEEDS_RESPONSE' | 'UNDER_REVIEW' | 'WON' | 'LOST' | 'ACCEPTED';

/** A chargeback the cardholder's bank opened against a paid order. */
export interface GqlDispute {
  id: string;
  orderReference: string;
  /** The amount disputed; taken off the order's balance once LOST or ACCEPTED. */
  amount: Decimal;
  currency: string;
  /** The bank's reason as the processor names it, e.g. `fraudulent`. */
  reason: string;
  status: DisputeStatus;
  /** The deadline of the answer: a dispute still NEEDS_RESPONSE then becomes LOST. */
  evidenceDueBy: DateTimeISO;
  /** The evidence submitted, if any. */
  evidence: string | null;
  /** When it became WON, LOST or ACCEPTED. */
  decidedAt: DateTimeISO | null;
  createdAt: DateTimeISO;
  updatedAt: DateTimeISO;
}

/** The environment's disputes, newest first; pass `pageInfo.endCursor` as `after` for the next page. */
export interface DisputeConnection {
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  edges: Array<{ cursor: string; node: GqlDispute }>;
}

export interface DisputesArgs {
  first?: number;
  after?: string;
  /** One status only; absent: all. */
  status?: DisputeStatus;
}

export interface SubmitDisputeEvidenceInput {
  /** The dispute's id. */
  id: string;
  /** What proves the sale (delivery, correspondence, terms): 1 to 10,000 characters, trimmed. */
  text: string;
}

/**
 * The `GraphQLRequestError.code` of a refused dispute call: DISPUTE_NOT_FOUND (no dispute of the
 * key's environment), DISPUTE_NOT_OPEN (already answered, decided, or past its deadline),
 * DISPUTE_EVIDENCE_INVALID (empty or too long), NOT_AVAILABLE_IN_LIVE_MODE (live keys), FORBIDDEN
 * (the public key).
 */
export type DisputeErrorCode = 'DISPUTE_NOT_FOUND' | 'DISPUTE_NOT_OPEN' | 'DISPUTE_EVIDENCE_INVALID' | 'NOT_AVAILABLE_IN_LIVE_MODE' | 'FORBIDDEN';

export const DISPUTE_FIELDS = 'id orderReference amount currency reason status evidenceDueBy evidence decidedAt createdAt updatedAt';
