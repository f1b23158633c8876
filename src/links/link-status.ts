import { validationError, type DomainError } from '../shared/errors';
import type { PaymentLink } from './payment-link.entity';

/** Where a link stands for a customer who opens it. */
export type PaymentLinkStatus = 'ACTIVE' | 'PAID' | 'LIMIT_REACHED' | 'DISABLED';

/** How far a link is used: orders counted, their distinct customers, and how many are the paying customer's own. */
export interface LinkUsage {
  orders: number;
  customers: number;
  mine: number;
}

/** The link's shape its rules read (an entity, or a row of a list). */
export type LinkShape = Pick<PaymentLink, 'isActive' | 'limit'> & { type: { code: string } };

/** A single-charge link or a link with a limit of paying customers: one that can be used up. */
export function hasLimit(link: LinkShape): boolean {
  return link.type.code === 'SC' || link.limit !== null;
}

/**
 * The one statement of a link's rules: a single-charge link takes one payment; a link with a
 * Limit takes that many paying customers (a customer who already paid may pay again). Answers
 * what a payment (by `usage.mine`'s customer) would be refused with, or null when it is allowed.
 */
export function usedUp(link: LinkShape, usage: LinkUsage): 'PAID' | 'LIMIT_REACHED' | null {
  if (link.type.code === 'SC' && usage.orders > 0) return 'PAID';
  if (link.limit !== null && usage.customers >= link.limit && usage.mine === 0) return 'LIMIT_REACHED';
  return null;
}

/** The status of a link from its paid orders (Successful, or Authorized and held for capture): what its page and the dashboard show. */
export function linkStatus(link: LinkShape, paid: LinkUsage): PaymentLinkStatus {
  if (!link.isActive) return 'DISABLED';
  return usedUp(link, { ...paid, mine: 0 }) ?? 'ACTIVE';
}

/**
 * Whether a subscription set up on `link` renews now: a disabled link skips the renewal (the
 * merchant paused it; renewals resume when the link is activated again); a link that no
 * longer sells a subscription (its type changed from SUB) stops it. A subscription without a
 * link (made before links carried the terms) renews.
 */
export function renewalRule(link: LinkShape | null): 'charge' | 'skip' | 'stop' {
  if (!link) return 'charge';
  if (link.type.code !== 'SUB') return 'stop';
  return link.isActive ? 'charge' : 'skip';
}

export const LINK_STATUS_MESSAGES: Record<Exclude<PaymentLinkStatus, 'ACTIVE'>, string> = {
  DISABLED: 'The payment link is not active.',
  PAID: 'This payment link has already been paid.',
  LIMIT_REACHED: 'This payment link has reached its limit of paying customers.',
};

/** A link used up only by payments still in progress (with the processor, or a page being answered): not paid, maybe free again shortly. */
export const LINK_BEING_PAID_MESSAGE = 'Another payment on this payment link is in progress; try again in a few minutes.';

export function linkRefusal(status: Exclude<PaymentLinkStatus, 'ACTIVE'>): DomainError {
  return validationError(LINK_STATUS_MESSAGES[status]);
}
