import { Type } from '@sinclair/typebox';
import {
  bodyErrors,
  commonErrors,
  EncryptedBody,
  EnvelopeA,
  EnvelopeB,
  error,
  failed,
  forbidden,
  idempotencyHeader,
  Nullable,
  security,
  Subsidiary,
  Text,
  Timestamp,
} from './common';
import { PaymentLink } from './links';
import type { PLAINTEXTS } from './order-plaintexts';

/** Orders: the verify body, the records answered and the routes (the Encrypted plaintexts are in order-plaintexts.ts). */

export const VerifyBody = Type.Object(
  { reference: Text(100, { description: 'The order reference.' }) },
  { title: 'VerifyBody', examples: [{ reference: 'ORD-1' }] },
);

const OrderCreated = Type.Object({
  order: Type.Object({
    reference: Type.String(),
    processorReference: Type.String(),
    orderPaymentReference: Nullable(Type.String()),
    amount: Type.Number(),
    fee: Type.Number(),
    feeRate: Nullable(Type.Number()),
    statusId: Type.Integer(),
    status: Type.String(),
    currency: Type.String(),
    narration: Type.String(),
    paymentLinkId: Nullable(Type.Integer()),
    recurringPaymentId: Nullable(Type.Integer()),
    paymentLinkReference: Nullable(Type.String()),
    recurringPaymentReference: Nullable(Type.String()),
  }),
  subsidiary: Subsidiary,
  customer: Type.Object({ email: Type.String(), firstName: Type.String(), lastName: Type.String(), mobile: Type.String(), country: Type.String() }),
  payment: Type.Object(
    {
      code: Nullable(Type.String()),
      source: Nullable(Type.String()),
      selectedOption: Nullable(Type.String()),
      accountNumber: Nullable(Type.String()),
      bankProviderName: Nullable(Type.String()),
    },
    { description: 'All null on creation.' },
  ),
  otherPaymentOptions: Type.Array(Type.Object({ code: Type.String(), name: Type.String(), currency: Type.String() })),
  savedCards: Type.Array(Type.Unknown()),
  subsidiaryOrderSummary: Type.Object({
    orderName: Type.String(),
    totalAmount: Type.Number(),
    reference: Type.String(),
    currency: Type.String(),
    orderItems: Type.Array(Type.Object({ name: Type.String(), amount: Type.Number() })),
  }),
});

const OrderPaymentRecord = Type.Object({
  orderId: Type.Integer(),
  orderPaymentReference: Type.String(),
  paymentOptionId: Type.Integer(),
  paymentOption: Type.String(),
  statusId: Type.Integer(),
  status: Type.String(),
  responseCode: Type.String(),
  responseMessage: Type.String(),
  orderPaymentInstrument: Nullable(Type.String()),
  remarks: Type.String(),
  dateCreated: Timestamp(),
  dateUpdated: Timestamp(),
});

const CardDetailRecord = Type.Object({
  orderPaymentId: Type.Integer(),
  status: Type.Boolean(),
  country: Nullable(Type.String()),
  cardToken: Nullable(Type.String()),
  cardExpiryMonth: Type.String(),
  cardExpiryYear: Type.String(),
  cardType: Type.String(),
  cardIssuer: Type.String(),
  cardFirstSixDigits: Type.String(),
  cardLastFourDigits: Type.String(),
  dateCreated: Timestamp(),
  appEnvironmentId: Type.Integer(),
});

export const OrderDetails = Type.Object(
  {
    orderReference: Type.String(),
    paymentReference: Type.String(),
    productName: Type.String(),
    totalAmountCharged: Type.Number(),
    statusId: Type.Integer(),
    status: Type.String(),
    paymentMethod: Type.String(),
    paymentResponseCode: Type.String(),
    paymentResponseMessage: Type.String(),
    narration: Type.String(),
    remarks: Type.String(),
    currencyId: Type.Integer(),
    paymentLinkId: Nullable(Type.Integer()),
    paymentLinkReference: Nullable(Type.String()),
    recurringPaymentId: Nullable(Type.Integer()),
    recurringPaymentReference: Nullable(Type.String()),
    currencyName: Type.String(),
    fee: Type.Number(),
    feeRate: Type.Number(),
    subsidiaryFee: Type.Number(),
    customerFee: Type.Number(),
    dateCreated: Timestamp(),
    dateUpdated: Timestamp(),
    datePaymentConfirmed: Nullable(Timestamp()),
    orderPayments: Type.Array(OrderPaymentRecord),
    customer: Type.Object(
      {
        customerId: Nullable(Type.String()),
        firstName: Nullable(Type.String()),
        lastName: Nullable(Type.String()),
        emailAddress: Nullable(Type.String()),
        countryShortName: Nullable(Type.String()),
        customerGroup: Nullable(Type.String()),
        countryId: Type.Integer(),
        globalStatusId: Type.Integer(),
        globalStatus: Nullable(Type.String()),
        mobileNumber: Nullable(Type.String()),
        isBlacklisted: Type.Boolean(),
        reasonBlacklisted: Nullable(Type.String()),
        dateCreated: Timestamp(),
        dateUpdated: Nullable(Timestamp()),
      },
      { description: 'Without customer data the values are null, countryId and globalStatusId 0, dateCreated `0001-01-01T00:00:00`.' },
    ),
    cardDetails: Type.Array(CardDetailRecord),
    paymentLink: Nullable(PaymentLink),
  },
  { title: 'OrderDetails' },
);

const OrderStatusRecord = Type.Object({
  payment_reference: Type.String(),
  order_reference: Type.String(),
  product_id: Type.Integer(),
  subsidiary_id: Type.Integer(),
  wallet_id: Type.Integer(),
  customer_id: Type.Integer(),
  total_charged_amount: Type.Number(),
  payment_status: Type.Integer(),
  currency_id: Type.Integer(),
  fee: Type.Number(),
  subsidiary_fee: Nullable(Type.Number()),
  customer_fee: Nullable(Type.Number()),
  payment_type: Type.String(),
  payment_response_code: Type.String(),
  payment_response_message: Type.String(),
  provider_response_date: Nullable(Timestamp()),
  date_payment_confirmed: Nullable(Timestamp()),
  narration: Type.String(),
  remarks: Type.String(),
  parent_transaction_id: Nullable(Type.Integer()),
  id: Type.Integer(),
  created_by: Type.Integer(),
  updated_by: Type.Integer(),
  deleted_by: Nullable(Type.Integer()),
  date_created: Timestamp(),
  date_updated: Timestamp(),
  date_deleted: Nullable(Timestamp()),
});

const PayResult = Type.Object({
  paymentDetail: Type.Object({
    redirectUrl: Type.String({ description: 'Where the customer authenticates (3-D Secure or PayPal); the merchant RedirectUrl when the answer is final.' }),
    recipientAccount: Nullable(Type.String()),
    paymentReference: Type.String(),
  }),
  bankTransferDetails: Nullable(Type.Object({}), { description: 'null for card and PayPal payments.' }),
  orderPayment: Type.Object({
    orderId: Type.Integer(),
    orderPaymentReference: Type.String(),
    currency: Type.String(),
    statusId: Type.Integer(),
    orderPaymentResponseCode: Type.String(),
    orderPaymentResponseMessage: Type.String(),
    orderPaymentInstrument: Nullable(Type.String()),
    remarks: Type.String(),
    totalAmount: Type.Number(),
    fee: Type.Number(),
  }),
});

const FeeResult = Type.Object({
  fee: Type.Number(),
  amount: Type.Number(),
  subsidiaryFee: Type.Number(),
  customerFee: Type.Number(),
  totalChargedAmount: Type.Number(),
  paymentOption: Type.String(),
});

const examplePayResult = {
  paymentDetail: {
    redirectUrl: 'https://checkout.example.test/sandbox/3ds/OPABCDEFGH23456789',
    recipientAccount: null,
    paymentReference: 'PAYABCDEFGH234567892',
  },
  bankTransferDetails: null,
  orderPayment: {
    orderId: 101,
    orderPaymentReference: 'OPABCDEFGH23456789',
    currency: 'NGN',
    statusId: 2,
    orderPaymentResponseCode: '02',
    orderPaymentResponseMessage: 'pending-authenticaion',
    orderPaymentInstrument: null,
    remarks: '',
    totalAmount: 1015,
    fee: 15,
  },
};

/** An Encrypted endpoint's body, with its plaintext described beside it. */
const encrypted = (plaintext: keyof typeof PLAINTEXTS) =>
  Type.Object(EncryptedBody.properties, {
    description: `Encrypted: \`data\` carries the plaintext \`${plaintext}\` (components.schemas.${plaintext}), encrypted under the encryption key. Property names in the plaintext are matched case-insensitively; null and empty strings count as absent; unknown properties are ignored.`,
    'x-plaintext': `#/components/schemas/${plaintext}`,
    examples: [{ data: 'k3Jc…base64…==' }],
  });

export const orderRouteSchemas = {
  createOrder: {
    tags: ['Orders'],
    summary: 'Create an order (Encrypted)',
    security,
    headers: idempotencyHeader,
    body: encrypted('CreateOrderPlaintext'),
    response: { 200: EnvelopeA(OrderCreated, ['01'], 'Created order successfully', 'The order, Initiated.'), ...commonErrors, ...bodyErrors },
  },
  fee: {
    tags: ['Orders'],
    summary: 'Quote the fee of a payment option (Encrypted)',
    security,
    headers: idempotencyHeader,
    body: encrypted('FeePlaintext'),
    response: {
      200: EnvelopeA(FeeResult, ['00'], 'Operation successful', 'The fee.', {
        fee: 15,
        amount: 1000,
        subsidiaryFee: 0,
        customerFee: 15,
        totalChargedAmount: 1015,
        paymentOption: 'C',
      }),
      ...commonErrors,
      ...bodyErrors,
    },
  },
  status: {
    tags: ['Orders'],
    summary: 'Query an order status (Encrypted)',
    security,
    headers: idempotencyHeader,
    body: encrypted('StatusPlaintext'),
    response: { 200: EnvelopeB(OrderStatusRecord, 'The status record (Envelope B).'), ...commonErrors, ...bodyErrors },
  },
  track: {
    tags: ['Orders'],
    summary: 'Record a timeline event on an order (Encrypted)',
    security,
    headers: idempotencyHeader,
    body: encrypted('TrackPlaintext'),
    response: { 200: EnvelopeA(Type.Null(), ['00'], 'Event logged successfully', 'Recorded.', null), ...commonErrors, ...bodyErrors },
  },
  pay: {
    tags: ['Orders'],
    summary: 'Pay an order by card or PayPal (Encrypted)',
    description: 'Answers `02` with `paymentDetail.redirectUrl` when the customer must authenticate, `00` when final (NOAUTH links).',
    security,
    headers: idempotencyHeader,
    body: encrypted('PayPlaintext'),
    response: {
      200: EnvelopeA(PayResult, ['02', '00'], 'pending-authenticaion', 'Pending authentication (`02`) or paid (`00`).', examplePayResult),
      402: error('Declined without authentication (NOAUTH links): codes 51, 54, 14, 96, 61, 05.', failed('51', 'Insufficient funds')),
      ...commonErrors,
      ...bodyErrors,
    },
  },
  verify: {
    tags: ['Orders'],
    summary: 'Verify an order (plain JSON, private key only)',
    security,
    headers: idempotencyHeader,
    body: VerifyBody,
    response: {
      200: EnvelopeA(OrderDetails, ['00'], 'Order details fetched successfully', 'The order details.'),
      ...commonErrors,
      ...forbidden,
      ...bodyErrors,
    },
  },
};
