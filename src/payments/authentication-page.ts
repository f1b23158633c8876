import { OrderStatus } from '../orders/order-status';
import { methodOfOption } from './payment-state';

/** Where the cardholder authenticates a payment attempt: the 3-D Secure page for a card, the PayPal page for PayPal. */
export function authenticationPageUrl(publicUrl: string, payment: { reference: string; paymentOptionId: number }): string {
  const path = methodOfOption(payment.paymentOptionId) === 'C' ? 'sandbox/3ds' : 'sandbox/paypal';
  return `${publicUrl}/${path}/${payment.reference}`;
}

/** The authentication page of an attempt while it awaits its cardholder; null once it does not. */
export function pendingAuthenticationUrl(publicUrl: string, payment: { reference: string; paymentOptionId: number; statusId: number }): string | null {
  return payment.statusId === OrderStatus.PendingAuthentication ? authenticationPageUrl(publicUrl, payment) : null;
}
