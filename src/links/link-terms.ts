import { createHash } from 'node:crypto';
import { currencyOf, Money } from '../shared/money';
import type { PaymentLink } from './payment-link.entity';

/**
 * What a customer agrees to on a link's page: the amount (null: theirs to enter), its currency,
 * whether the card is authenticated and when it is charged, and whether it is charged again (the
 * link's type, and a subscription's frequency and number of payments).
 */
export type LinkTerms = Pick<PaymentLink, 'amount' | 'currency' | 'authOption' | 'captureMethod' | 'numberOfPayments'> & {
  type: { id: number };
  frequency: { id: number } | null;
};

/**
 * A short fingerprint of a link's terms, written into its page and posted back with the payment:
 * a payment whose page showed other terms (the merchant edited the link meanwhile) is refused,
 * so nobody is charged an amount, or without an authentication, they were not shown.
 * Not a secret: anyone can read the page.
 */
export function linkTermsVersion(link: LinkTerms): string {
  const amount = linkAmountShown(link);
  return createHash('sha256')
    .update(JSON.stringify([amount, link.currency, link.authOption, link.captureMethod, link.type.id, link.frequency?.id ?? null, link.numberOfPayments]))
    .digest('base64url')
    .slice(0, 16);
}

/** A fixed amount as the link's page shows and posts it back (the currency's decimals); null when the customer enters it. */
export function linkAmountShown(link: Pick<PaymentLink, 'amount' | 'currency'>): string | null {
  return link.amount === null ? null : new Money(link.amount).toFixed(currencyOf(link.currency)?.minorUnits ?? 2);
}
