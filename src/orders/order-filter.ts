import { validationError } from '../shared/errors';
import { currencyFilter, idInRange, knownIds, knownText, searchFilter } from '../shared/list-filter';
import { isQueryableDate } from '../shared/time';
import { PAYMENT_OPTION_NAMES } from '../shared/payment-options';
import { OrderStatus } from './order-status';

/** An order-list filter as an adapter hands it over: nothing in it is trusted yet. */
export interface OrderFilterCriteria {
  statusIds?: readonly unknown[] | null;
  createdFrom?: Date | null;
  createdTo?: Date | null;
  paymentLinkId?: unknown;
  currency?: unknown;
  search?: unknown;
  /** As the order's `paymentMethod` field shows it ("Card Payment", "PayPal"; "" before any payment attempt). */
  paymentMethod?: unknown;
}

/** A checked order-list filter: every value known, bounded and in range (see `orderListFilter`). */
export interface OrderListFilter {
  /** Known status ids, deduplicated, at most MAX_FILTER_VALUES. */
  statusIds?: number[];
  createdFrom?: Date;
  createdTo?: Date;
  paymentLinkId?: number;
  /** A supported currency code, upper case. */
  currency?: string;
  search?: string;
  /** One of PAYMENT_METHODS_SHOWN. */
  paymentMethod?: string;
}

const STATUS_IDS: readonly number[] = Object.values(OrderStatus);
/** What the `paymentMethod` filter accepts: each shown name, and "" for orders without a payment attempt yet. */
export const PAYMENT_METHODS_SHOWN: readonly string[] = ['', ...Object.values(PAYMENT_OPTION_NAMES)];

/**
 * Checks an order-list filter before any of it reaches SQL: at most 20 status ids, each a
 * known status, duplicates collapsed; a link id in the range of its column; a supported
 * currency; search text of bounded length; a payment method as orders show it; dates a query
 * can compare with. Throws a `bad_input` (or, for dates, `validation`) error otherwise.
 */
export function orderListFilter(criteria: OrderFilterCriteria): OrderListFilter {
  if (!isQueryableDate(criteria.createdFrom)) throw validationError('The CreatedFrom field must be a date between the years 1 and 9999.');
  if (!isQueryableDate(criteria.createdTo)) throw validationError('The CreatedTo field must be a date between the years 1 and 9999.');
  const filter: OrderListFilter = {
    statusIds: knownIds('statusIds', criteria.statusIds, STATUS_IDS),
    createdFrom: criteria.createdFrom ?? undefined,
    createdTo: criteria.createdTo ?? undefined,
    paymentLinkId: idInRange('paymentLinkId', criteria.paymentLinkId),
    currency: currencyFilter('currency', criteria.currency),
    search: searchFilter('search', criteria.search),
    paymentMethod: knownText('paymentMethod', criteria.paymentMethod, PAYMENT_METHODS_SHOWN),
  };
  for (const key of Object.keys(filter) as Array<keyof OrderListFilter>) if (filter[key] === undefined) delete filter[key];
  return filter;
}

/** The stored `payment_method` codes a shown payment method stands for (null: no payment attempt yet). */
export function paymentMethodCodes(shown: string): Array<string | null> {
  if (shown === '') return [null, ''];
  return Object.entries(PAYMENT_OPTION_NAMES)
    .filter(([, name]) => name === shown)
    .map(([code]) => code);
}

/** How an order's `paymentMethod` field shows a stored code. */
export const shownPaymentMethod = (code: string | null): string => (code ? (PAYMENT_OPTION_NAMES[code] ?? code) : '');
