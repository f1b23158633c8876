import type { DisputeNotice } from './processor';

/**
 * Why a processor's notice of a new dispute, on a payment this engine knows, opens nothing:
 * - `currency_mismatch`: the notice's currency is not the order's. A dispute in another currency
 *   would take a foreign amount off the order's balance.
 */
export type DisputeRefusal = 'currency_mismatch';

/** The order a notice names, as far as opening a dispute on it depends on it. */
export interface OrderDisputed {
  currency: string;
}

/** Why the notice may not open a dispute on `order`, or null when it may. */
export function disputeRefusal(order: OrderDisputed, notice: Pick<DisputeNotice, 'currency'>): DisputeRefusal | null {
  // ISO 4217 codes, whatever their case (some processors write them in lower case).
  if (notice.currency.trim().toUpperCase() !== order.currency.trim().toUpperCase()) return 'currency_mismatch';
  return null;
}
