import Decimal from 'decimal.js';
import { type DomainError, validationError } from './errors';

/** Exact decimal arithmetic for money: never a binary float in a sum. */
export const Money = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_UP });
export type Money = Decimal;

/** Largest amount accepted anywhere (fits numeric(20,4) and prints exactly as a JSON number). */
export const MAX_AMOUNT = new Money('999999999999.99');

export interface Currency {
  code: string;
  /** ISO 4217 numeric code: the `currencyId` of the legacy interface. */
  id: number;
  name: string;
  minorUnits: number;
}

/** Currencies the gateway settles. Anything else is "Currency is currently not supported." */
export const CURRENCIES: Readonly<Record<string, Currency>> = {
  NGN: { code: 'NGN', id: 566, name: 'Nigerian Naira', minorUnits: 2 },
  USD: { code: 'USD', id: 840, name: 'US Dollar', minorUnits: 2 },
  GBP: { code: 'GBP', id: 826, name: 'Pound Sterling', minorUnits: 2 },
  EUR: { code: 'EUR', id: 978, name: 'Euro', minorUnits: 2 },
  GHS: { code: 'GHS', id: 936, name: 'Ghana Cedi', minorUnits: 2 },
  KES: { code: 'KES', id: 404, name: 'Kenyan Shilling', minorUnits: 2 },
  ZAR: { code: 'ZAR', id: 710, name: 'South African Rand', minorUnits: 2 },
};

export function currencyOf(code: string): Currency | undefined {
  return Object.prototype.hasOwnProperty.call(CURRENCIES, code) ? CURRENCIES[code] : undefined;
}

export type AmountProblem = 'invalid' | 'not_positive' | 'too_large' | 'too_precise';

/**
 * Reads an amount given as a JSON number or a decimal string. JSON numbers are read from
 * their shortest decimal form (`String(n)`), which is the text the client wrote for any
 * amount of at most 15 significant digits.
 */
export function parseAmount(value: unknown, minorUnits = 2): Money | AmountProblem {
  let text: string;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return 'invalid';
    text = String(value);
  } else if (typeof value === 'string') {
    text = value.trim();
  } else {
    return 'invalid';
  }
  if (!/^-?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i.test(text)) return 'invalid';
  const amount = new Money(text);
  if (amount.lte(0)) return 'not_positive';
  if (amount.gt(MAX_AMOUNT)) return 'too_large';
  if (amount.decimalPlaces() > minorUnits) return 'too_precise';
  return amount;
}

/** The validation error of an amount `parseAmount` refused, worded for `field`. */
export function amountError(problem: AmountProblem, field = 'Amount'): DomainError {
  switch (problem) {
    case 'not_positive':
      return validationError(`The ${field} field must be greater than zero.`);
    case 'too_large':
      return validationError(`The ${field} field must be at most 999999999999.99.`);
    case 'too_precise':
      return validationError(`The ${field} field must have at most 2 decimal places.`);
    default:
      return validationError(`The ${field} field must be a number.`);
  }
}

/** A money value as the legacy interface prints it: a JSON number. Exact for every stored amount (≤ 15 significant digits). */
export function moneyNumber(value: string | Money | null | undefined): number | null {
  if (value === null || value === undefined) return null;
  return new Money(value).toNumber();
}

/** Rounds to the currency's minor unit, half up (the acquirers' convention). */
export function roundToMinor(value: Money, minorUnits = 2): Money {
  return value.toDecimalPlaces(minorUnits, Money.ROUND_HALF_UP);
}

/** "NGN 15,000.00": the one way amounts are written for people (exact, grouped by thousands). */
export function formatMoney(value: string | Money, currency: string, minorUnits = currencyOf(currency)?.minorUnits ?? 2): string {
  const [whole, fraction] = new Money(value).toFixed(minorUnits).split('.');
  const grouped = whole!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${currency} ${grouped}${fraction ? `.${fraction}` : ''}`;
}
