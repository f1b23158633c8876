import { currencyOf, Money, parseAmount } from '../shared/money';
import { OrderStatus, type OrderStatusId } from '../orders/order-status';
import type { DisputeNotice } from './processor';

/**
 * Why a processor's notice of a new dispute, on a payment this engine knows, opens nothing. No
 * processor sends such a notice for a payment it settled as this engine did; the money is then for
 * an operator to reconcile, never for the engine to guess:
 * - `currency_mismatch`: the notice's currency is not the order's. A dispute in another currency
 *   would take a foreign amount off the order's balance.
 * - `payment_not_captured`: the order is not Successful (Initiated, Failed, Authorized and not
 *   captured, Voided…). A chargeback takes back money that was captured; none was.
 * - `amount_invalid`: the amount is not a positive number of the currency's minor units (0.001,
 *   10.005, 0, not a number). Rounded, it would not be the amount the processor disputes.
 * - `amount_over_balance`: the amount is more than the order has left to dispute: what it charged,
 *   less its refunds not FAILED and its disputes not WON (`disputable`). Lost, such a dispute
 *   would take back more than the merchant still holds of the payment.
 */
export type DisputeRefusal = 'currency_mismatch' | 'payment_not_captured' | 'amount_invalid' | 'amount_over_balance';

/** The order a notice names, as far as opening a dispute on it depends on it. */
export interface OrderDisputed {
  currency: string;
  statusId: OrderStatusId;
}

/** The amount the notice opens a dispute of `order` for (exact, in the order's currency), or why it may open none. */
export function disputeOpening(
  order: OrderDisputed,
  notice: Pick<DisputeNotice, 'currency' | 'amount'>,
  disputable: Money,
): { amount: Money } | { refused: DisputeRefusal } {
  // ISO 4217 codes, whatever their case (some processors write them in lower case).
  if (notice.currency.trim().toUpperCase() !== order.currency.trim().toUpperCase()) return { refused: 'currency_mismatch' };
  if (order.statusId !== OrderStatus.Successful) return { refused: 'payment_not_captured' };
  const amount = parseAmount(notice.amount, currencyOf(order.currency.trim())?.minorUnits ?? 2);
  if (typeof amount === 'string') return { refused: 'amount_invalid' };
  if (amount.gt(disputable)) return { refused: 'amount_over_balance' };
  return { amount };
}
