/**
 * The payment options a customer pays an order with, in every form the code meets them: the
 * stored code (an order's `payment_method`, a fee rule's option), the legacy interface's
 * numeric id (`paymentOptionId`) and the label an order shows (`paymentMethod`, `paymentOption`).
 */
export const PAYMENT_OPTIONS = ['C', 'PAYPAL'] as const;
export type PaymentOptionCode = (typeof PAYMENT_OPTIONS)[number];

/** The legacy interface's id of each option (2 = Card Payment, 3 = PayPal). */
export const PAYMENT_OPTION_IDS: Readonly<Record<string, number>> = { C: 2, PAYPAL: 3 };

/** How an order shows each stored payment method code. */
export const PAYMENT_OPTION_NAMES: Readonly<Record<string, string>> = { C: 'Card Payment', PAYPAL: 'PayPal' };
