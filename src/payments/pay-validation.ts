import { DomainError, requiredField, unsupported, validationError } from '../shared/errors';
import { requireSupportedCountry } from '../shared/countries';
import { trimmedText as text, type InputObject } from '../shared/input';
import { OrderStatus } from '../orders/order-status';
import { cardBrand, cardFingerprintParts, luhnValid } from './card';
import type { PaymentMethod } from './payment-state';
import { PAYMENT_OPTION_IDS } from '../shared/payment-options';

export interface BillingAddressInput {
  street?: string | null;
  city?: string | null;
  state?: string | null;
  country?: string | null;
  zipcode?: string | null;
}

export interface PayOrderInput {
  reference?: string | null;
  paymentOption?: string | null;
  country?: string | null;
  card?: {
    cardNumber?: string | null;
    expiryMonth?: string | null;
    expiryYear?: string | null;
    cvv?: string | null;
    billingAddress?: BillingAddressInput | null;
  } | null;
  paypal?: { fullName?: string | null; mobile?: string | null; house?: string | null; billingAddress?: BillingAddressInput | null } | null;
}

export interface ValidCard {
  /** Never stored, logged or returned: handed to the processor and dropped. */
  secret: { cardNumber: string; cvv: string };
  expiryMonth: string;
  expiryYear: string;
  brand: string;
  firstSix: string;
  lastFour: string;
}

/** A pay request whose every part (but the order it names) has been checked. */
export interface ValidPayment {
  method: PaymentMethod;
  country: string;
  /** The card, for method C; null for PayPal. */
  card: ValidCard | null;
}

/** A pay request checked: the order it names, and how the customer pays. */
export function validatePayRequest(input: PayOrderInput, now: Date): ValidPayment & { reference: string } {
  const reference = text(input.reference);
  if (!reference) throw requiredField('Reference');
  return { reference, ...validatePayment(input, now) };
}

/** An order takes a payment only while nobody has paid it, nor is paying it, nor has failed it. */
export function assertOrderPayable(order: { statusId: number }): void {
  if (order.statusId === OrderStatus.Successful) throw validationError('The order has already been paid.');
  if (order.statusId === OrderStatus.Failed) throw validationError('The order has failed; create a new order to pay again.');
  if (order.statusId === OrderStatus.PendingAuthentication || order.statusId === OrderStatus.Processing) {
    throw new DomainError('conflict', 'A payment of this order is already awaiting authentication.', 'VAL400');
  }
}

/**
 * Checks everything about how the customer pays (option, country, card or PayPal details),
 * before anything is written: an attempt refused here leaves no trace. `now` decides whether
 * the card has expired.
 */
export function validatePayment(input: Omit<PayOrderInput, 'reference'>, now: Date): ValidPayment {
  const option = text(input.paymentOption)?.toUpperCase();
  if (!option) throw validationError('payment option is required!');
  if (!(option in PAYMENT_OPTION_IDS)) throw unsupported('PaymentOption');
  const method = option as PaymentMethod;
  const country = text(input.country)?.toUpperCase();
  if (!country) throw requiredField('Country');
  requireSupportedCountry(country);

  if (method === 'C') {
    if (!input.card) throw requiredField('Card');
    return { method, country, card: validateCard(input.card, now) };
  }
  if (!input.paypal) throw requiredField('Paypal');
  if (!text(input.paypal.fullName)) throw requiredField('FullName');
  if (!text(input.paypal.mobile)) throw requiredField('Mobile');
  validateBillingAddress(input.paypal.billingAddress);
  return { method, country, card: null };
}

function validateCard(c: NonNullable<PayOrderInput['card']>, now: Date): ValidCard {
  const number = (text(c.cardNumber) ?? '').replace(/[\s-]/g, '');
  if (!number) throw requiredField('CardNumber');
  if (!luhnValid(number)) throw validationError('The CardNumber field is not a valid card number.');
  const month = text(c.expiryMonth);
  if (!month) throw requiredField('ExpiryMonth');
  if (!/^(0[1-9]|1[0-2])$/.test(month)) throw validationError('The ExpiryMonth field must be two digits from 01 to 12.');
  const year = text(c.expiryYear);
  if (!year) throw requiredField('ExpiryYear');
  if (!/^\d{2}$/.test(year)) throw validationError('The ExpiryYear field must be two digits.');
  const expiry = Date.UTC(2000 + Number(year), Number(month), 1); // first instant after the expiry month
  if (expiry <= now.getTime()) throw validationError('The card has expired.');
  const cvv = text(c.cvv);
  if (!cvv) throw requiredField('Cvv');
  if (!/^\d{3,4}$/.test(cvv)) throw validationError('The Cvv field must be 3 or 4 digits.');
  validateBillingAddress(c.billingAddress);
  const { firstSix, lastFour } = cardFingerprintParts(number);
  return { secret: { cardNumber: number, cvv }, expiryMonth: month, expiryYear: year, brand: cardBrand(number), firstSix, lastFour };
}

/**
 * The billing address is optional (legacy clients send none, or null). An address whose
 * every part is absent counts as absent; a given address needs street, city and country.
 */
function validateBillingAddress(a: BillingAddressInput | null | undefined): void {
  if (!a) return;
  const parts = [a.street, a.city, a.state, a.country, a.zipcode];
  if (parts.every((p) => !text(p))) return;
  if (!text(a.street)) throw requiredField('Street');
  if (!text(a.city)) throw requiredField('City');
  const country = text(a.country)?.toUpperCase();
  if (!country) throw requiredField('Country');
  if (!/^[A-Z]{2}$/.test(country)) throw validationError('The Country field of the billing address must be an ISO 3166-1 alpha-2 code.');
}

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
