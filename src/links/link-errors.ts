import { type DomainError, notFound } from '../shared/errors';

/** The message of an unknown payment link (or one of another merchant environment). */
export const PAYMENT_LINK_NOT_FOUND = 'payment link not found';

/** `not_found` with the legacy response code 02, as every adapter answers an unknown link. */
export const linkNotFound = (): DomainError => notFound(PAYMENT_LINK_NOT_FOUND, '02');
