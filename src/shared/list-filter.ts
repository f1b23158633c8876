import { DomainError } from './errors';
import { currencyOf } from './money';

/**
 * Checks of list filters, shared by every list the domain serves (orders, payment links, …).
 * A filter value reaches SQL only after one of these: lists of at most MAX_FILTER_VALUES
 * values, deduplicated and each one a known id; integers in the range of their column;
 * currencies the gateway knows; search text of bounded length. A refusal is a `bad_input`
 * error (GraphQL BAD_USER_INPUT, REST VAL400), never a database error.
 */

/** Most values one list filter (such as `statusIds`) takes. */
export const MAX_FILTER_VALUES = 20;
/** Longest search text (the longest e-mail address). */
export const MAX_SEARCH_LENGTH = 320;
/** Largest value of an `int` column (ids of links, orders, …). */
export const MAX_INT_ID = 2_147_483_647;

/** A filter value the service cannot use: the client has to change the request. */
export const badInput = (message: string): DomainError => new DomainError('bad_input', message, 'VAL400');

const listed = (values: readonly (number | string)[]): string => values.map((v) => (typeof v === 'string' ? JSON.stringify(v) : String(v))).join(', ');

/**
 * A list of ids: absent (undefined or null) means "no filter"; otherwise at most
 * MAX_FILTER_VALUES values, each one of `known`, duplicates collapsed (first occurrence kept).
 * An empty list is an empty filter, as absent.
 */
export function knownIds(field: string, values: readonly unknown[] | null | undefined, known: readonly number[]): number[] | undefined {
  if (values === undefined || values === null) return undefined;
  if (!Array.isArray(values)) throw badInput(`The ${field} filter must be a list.`);
  if (values.length > MAX_FILTER_VALUES) throw badInput(`The ${field} filter takes at most ${MAX_FILTER_VALUES} values (got ${values.length}).`);
  const unique: number[] = [];
  for (const value of values) {
    if (typeof value !== 'number' || !known.includes(value)) {
      throw badInput(`The ${field} filter holds ${value === null ? 'null' : `the unknown id ${JSON.stringify(value)}`}; known ids are ${listed(known)}.`);
    }
    if (!unique.includes(value)) unique.push(value);
  }
  return unique.length ? unique : undefined;
}

/** An integer id filter in [1, max]; absent (undefined or null) means "no filter". */
export function idInRange(field: string, value: unknown, max = MAX_INT_ID): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw badInput(`The ${field} filter must be a whole number from 1 to ${max}.`);
  }
  return value;
}

/** A currency code the gateway knows (any case), upper-cased; absent or "" means "no filter". */
export function currencyFilter(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const code = typeof value === 'string' ? value.trim().toUpperCase() : '';
  if (!currencyOf(code))
    throw badInput(`The ${field} filter must be a currency code the gateway supports (such as NGN); got ${JSON.stringify(String(value)).slice(0, 40)}.`);
  return code;
}

/** Search text of at most MAX_SEARCH_LENGTH characters, trimmed; absent or blank means "no filter". */
export function searchFilter(field: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw badInput(`The ${field} filter must be text.`);
  if (value.length > MAX_SEARCH_LENGTH) throw badInput(`The ${field} filter takes at most ${MAX_SEARCH_LENGTH} characters (got ${value.length}).`);
  const text = value.trim();
  return text === '' ? undefined : text;
}

/** One of `known` (compared without case); absent means "no filter". Answers the known spelling. */
export function knownText(field: string, value: unknown, known: readonly string[]): string | undefined {
  if (value === undefined || value === null) return undefined;
  const text = typeof value === 'string' ? value.trim() : undefined;
  const found = text === undefined ? undefined : known.find((k) => k.toLowerCase() === text.toLowerCase());
  if (found === undefined) throw badInput(`The ${field} filter must be one of ${listed(known)}.`);
  return found;
}

const ISO_DATE = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/**
 * An instant: a Date, or text in ISO 8601 (`2026-11-26`, midnight UTC, or `2026-11-26T10:00:00Z`);
 * absent or "" means "no filter". Between the years 1970 and 9999, as a query can compare it.
 */
export function dateFilter(field: string, value: unknown): Date | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const date = value instanceof Date ? value : typeof value === 'string' && ISO_DATE.test(value.trim()) ? new Date(value.trim()) : undefined;
  const t = date?.getTime();
  if (t === undefined || !Number.isFinite(t) || t < 0 || t > Date.UTC(9999, 11, 31, 23, 59, 59)) {
    throw badInput(`The ${field} filter must be a date (such as 2026-01-31 or 2026-01-31T12:00:00Z) between the years 1970 and 9999.`);
  }
  return date;
}
