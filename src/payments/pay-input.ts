import type { InputObject } from '../shared/input';
import type { BillingAddressInput, PayOrderInput } from './pay-validation';

/**
 * Reads the card or PayPal part of a pay request, case-insensitively:
 * from the REST plaintext, the GraphQL encrypted payload and the checkout page alike.
 */
export function readPaymentInstrument(input: InputObject): Pick<PayOrderInput, 'card' | 'paypal'> {
  const card = input.optionalObject('card')?.allowOnly(['cardNumber', 'expiryMonth', 'expiryYear', 'cvv', 'billingAddress']);
  const paypal = input.optionalObject('paypal')?.allowOnly(['fullName', 'mobile', 'house', 'billingAddress']);
  return {
    card: card && {
      cardNumber: card.optionalString('cardNumber', 30),
      expiryMonth: card.optionalString('expiryMonth', 4),
      expiryYear: card.optionalString('expiryYear', 4),
      cvv: card.optionalString('cvv', 4),
      billingAddress: billingAddress(card.optionalObject('billingAddress')),
    },
    paypal: paypal && {
      fullName: paypal.optionalString('fullName', 200),
      mobile: paypal.optionalString('mobile', 40),
      house: paypal.optionalString('house', 200),
      billingAddress: billingAddress(paypal.optionalObject('billingAddress')),
    },
  };
}

function billingAddress(o: InputObject | null): BillingAddressInput | null {
  const a = o?.allowOnly(['street', 'city', 'state', 'country', 'zipcode']);
  return a
    ? {
        street: a.optionalString('street', 200),
        city: a.optionalString('city', 100),
        state: a.optionalString('state', 100),
        country: a.optionalString('country', 10),
        zipcode: a.optionalString('zipcode', 20),
      }
    : null;
}
