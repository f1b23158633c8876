import { Type } from '@sinclair/typebox';
import { Numeric, Text } from './common';

/**
 * Plaintexts of the Encrypted endpoints: what a client encrypts into `data`, read with
 * readInput (case-insensitive names, aliases under `x-aliases`, null and empty strings count as absent).
 */

/** The payment option of fee and pay; the official Java SDK names it `paymentmethod`. */
const PaymentOption = Text(20, {
  description: '`C` (card) or `PAYPAL`.',
  'x-aliases': ['paymentmethod'],
  'x-required-message': 'payment option is required!',
});

const BillingAddress = Type.Object(
  {
    street: Type.Optional(Text(200)),
    city: Type.Optional(Text(100)),
    state: Type.Optional(Text(100)),
    country: Type.Optional(Text(10)),
    zipcode: Type.Optional(Text(20)),
  },
  { description: 'Optional.' },
);

export const CreateOrderPlaintext = Type.Object(
  {
    customer: Type.Object({
      firstname: Text(100),
      lastname: Text(100),
      mobile: Type.Optional(Text(40, { description: 'With country code. Optional: the customer is known by email.' })),
      country: Text(10, { description: 'ISO 3166-1 alpha-2.' }),
      email: Text(320),
    }),
    order: Type.Object({
      amount: Numeric(),
      reference: Text(100, { description: 'Unique per merchant and environment.' }),
      description: Type.Optional(Text(2000)),
      currency: Type.Optional(Text(10, { description: 'Default `NGN`.' })),
    }),
    payment: Type.Object({
      RedirectUrl: Text(2000, { description: 'Where the customer lands after paying.' }),
      paymentLinkId: Type.Optional(Numeric()),
      frequencyId: Type.Optional(Numeric({ description: 'A charge frequency id (subscriptions); needs numberOfPayments.' })),
      numberOfPayments: Type.Optional(Numeric()),
    }),
    paymentMeta: Type.Optional(Type.Object({ ipAddress: Type.Optional(Text(64)) })),
  },
  {
    title: 'CreateOrderPlaintext',
    examples: [
      {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
        order: { amount: 1000, reference: 'ORD-1', description: 'Two tickets', currency: 'NGN' },
        payment: { RedirectUrl: 'https://merchant.test/done' },
      },
    ],
  },
);

export const FeePlaintext = Type.Object(
  {
    amount: Numeric(),
    paymentOption: PaymentOption,
    currency: Type.Optional(Text(10, { description: 'Default `NGN`.' })),
  },
  { title: 'FeePlaintext', examples: [{ amount: 1000, paymentOption: 'C', currency: 'NGN' }] },
);

export const StatusPlaintext = Type.Object({ reference: Text(100) }, { title: 'StatusPlaintext', examples: [{ reference: 'ORD-1' }] });

export const TrackPlaintext = Type.Object(
  {
    orderReference: Text(100),
    event: Text(100, { description: 'The event name.', 'x-aliases': ['eventname'] }),
    description: Type.Optional(Text(2000)),
    metadata: Type.Optional(Type.Unknown({ description: 'Any JSON value, stored as given.' })),
  },
  {
    title: 'TrackPlaintext',
    examples: [{ orderReference: 'ORD-1', event: 'checkout.viewed', description: 'Customer opened checkout', metadata: { page: 1 } }],
  },
);

export const PayPlaintext = Type.Object(
  {
    reference: Text(100),
    paymentOption: PaymentOption,
    country: Text(10),
    card: Type.Optional(
      Type.Object(
        {
          cardNumber: Type.Optional(Text(30)),
          expiryMonth: Type.Optional(Text(4, { description: 'Two digits.' })),
          expiryYear: Type.Optional(Text(4, { description: 'Two digits.' })),
          cvv: Type.Optional(Text(4)),
          billingAddress: Type.Optional(BillingAddress),
        },
        { description: 'Required when paymentOption is `C`: cardNumber, expiryMonth, expiryYear and cvv.' },
      ),
    ),
    paypal: Type.Optional(
      Type.Object(
        {
          fullName: Type.Optional(Text(200)),
          mobile: Type.Optional(Text(40)),
          house: Type.Optional(Text(200)),
          billingAddress: Type.Optional(BillingAddress),
        },
        { description: 'Required when paymentOption is `PAYPAL`: fullName and mobile.' },
      ),
    ),
  },
  {
    title: 'PayPlaintext',
    examples: [
      { reference: 'ORD-1', paymentOption: 'C', country: 'NG', card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123' } },
      { reference: 'ORD-1', paymentOption: 'PAYPAL', country: 'NG', paypal: { fullName: 'Ada Obi', mobile: '+2348012345678', house: '12' } },
    ],
  },
);

/** The plaintexts, by the name the OpenAPI document lists them under (components.schemas). */
export const PLAINTEXTS = { CreateOrderPlaintext, FeePlaintext, StatusPlaintext, TrackPlaintext, PayPlaintext } as const;
