import { validationError } from '../shared/errors';
import { formatMoney, Money, roundToMinor } from '../shared/money';

import type { PaymentOptionCode } from '../shared/payment-options';

const OPTION_NAMES: Record<PaymentOptionCode, string> = { C: 'card', PAYPAL: 'PayPal' };

/**
 * The smallest amount each payment option accepts, per currency (docs/payments.md, "Minimum
 * amounts"). Below these a payment would cost more in processing than it moves: PayPal's flat
 * part alone is NGN 100.00, a card's 1.5 % of NGN 0.50 rounds to a third of the amount.
 */
export const MINIMUM_AMOUNTS: Readonly<Record<PaymentOptionCode, Readonly<Record<string, string>>>> = {
  C: { NGN: '1.00', GHS: '1.00', KES: '10.00', ZAR: '5.00', USD: '0.30', GBP: '0.30', EUR: '0.30' },
  PAYPAL: { NGN: '1000.00', GHS: '10.00', KES: '100.00', ZAR: '10.00', USD: '1.00', GBP: '1.00', EUR: '1.00' },
};

/** How an option's fee is computed: `min(round(amount × rate + flat), cap)`. */
export interface FeeFormula {
  rate: string;
  flat: string;
  cap: string | null;
}

export function feeOf(amount: Money, formula: FeeFormula | undefined, minorUnits: number): Money {
  if (!formula) return new Money(0);
  const fee = roundToMinor(amount.times(formula.rate).plus(formula.flat), minorUnits);
  return formula.cap !== null && fee.gt(formula.cap) ? new Money(formula.cap) : fee;
}

/**
 * The smallest amount an option accepts in a currency: its listed minimum, raised (for a
 * merchant whose fee rule has a large flat part) to the smallest amount that stays larger than
 * its own fee. A fee never reaches the amount it is taken from.
 */
export function minimumAmount(option: PaymentOptionCode, currency: string, formula: FeeFormula | undefined, minorUnits: number): Money {
  const listed = new Money(MINIMUM_AMOUNTS[option][currency] ?? '0');
  const step = new Money(1).dividedBy(new Money(10).pow(minorUnits));
  let minimum = listed.gt(0) ? listed : step;
  if (formula && new Money(formula.rate).lt(1)) {
    // amount > amount × rate + flat  ⇔  amount > flat / (1 − rate); then step over rounding.
    let bound = new Money(formula.flat).dividedBy(new Money(1).minus(formula.rate)).toDecimalPlaces(minorUnits, Money.ROUND_UP);
    if (formula.cap !== null && new Money(formula.cap).plus(step).lt(bound)) bound = new Money(formula.cap).plus(step);
    if (bound.gt(minimum)) minimum = bound;
    while (feeOf(minimum, formula, minorUnits).gte(minimum)) minimum = minimum.plus(step);
  }
  return minimum;
}

/** Refuses an amount below the option's minimum, naming the minimum. */
export function assertAtLeastMinimum(amount: Money, option: PaymentOptionCode, currency: string, formula: FeeFormula | undefined, minorUnits: number): void {
  const minimum = minimumAmount(option, currency, formula, minorUnits);
  if (amount.lt(minimum)) {
    throw validationError(`The Amount field must be at least ${formatMoney(minimum, currency, minorUnits)} to pay by ${OPTION_NAMES[option]}.`);
  }
}
