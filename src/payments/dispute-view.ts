import { DomainError } from '../shared/errors';
import { Money } from '../shared/money';
import type { DisputeStatus } from './payment-state';
import type { Dispute } from './dispute.entity';

/**
 * A dispute as every interface shows it (GraphQL's `Dispute`, the webhook's `data`): the amount
 * an exact decimal string with two places, times as instants (ISO 8601 once serialised).
 */
export interface DisputeView {
  id: string;
  orderReference: string;
  amount: string;
  currency: string;
  reason: string;
  status: DisputeStatus;
  evidenceDueBy: Date;
  evidence: string | null;
  decidedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export function disputeView(dispute: Dispute, orderReference: string): DisputeView {
  return {
    id: dispute.id,
    orderReference,
    amount: new Money(dispute.amount).toFixed(2),
    currency: dispute.currency,
    reason: dispute.reason,
    status: dispute.status,
    evidenceDueBy: dispute.evidenceDueBy,
    evidence: dispute.evidence,
    decidedAt: dispute.decidedAt,
    createdAt: dispute.createdAt,
    updatedAt: dispute.updatedAt,
  };
}

/** The most evidence text a dispute takes (the processors' own limit for free text is of this order). */
export const MAX_EVIDENCE_LENGTH = 10_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** No dispute of the caller's environment has this id. */
export const disputeNotFound = (): DomainError => new DomainError('not_found', 'Dispute not found.', 'DISPUTE_NOT_FOUND');

/** The deadline to answer has passed (the dispute job records it lost): no answer counts any more. */
export const disputeDeadlinePassed = (): DomainError => new DomainError('conflict', 'The deadline to answer this dispute has passed.', 'DISPUTE_NOT_OPEN');

/** The dispute's id as asked for: a UUID, else no dispute has it. */
export function readDisputeId(id: unknown): string {
  if (typeof id !== 'string' || !UUID.test(id.trim())) throw disputeNotFound();
  return id.trim().toLowerCase();
}

/** Evidence text: not blank, at most MAX_EVIDENCE_LENGTH characters once trimmed. */
export function readEvidence(text: unknown): string {
  const evidence = typeof text === 'string' ? text.trim() : '';
  if (!evidence) throw new DomainError('validation', 'The evidence text is required.', 'DISPUTE_EVIDENCE_INVALID');
  if (evidence.length > MAX_EVIDENCE_LENGTH)
    throw new DomainError('validation', `The evidence text must be at most ${MAX_EVIDENCE_LENGTH} characters.`, 'DISPUTE_EVIDENCE_INVALID');
  return evidence;
}
