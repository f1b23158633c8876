import { Type, type SchemaOptions, type TSchema } from '@sinclair/typebox';
import { errorBody } from './envelopes';

/**
 * The shim's schemas, in TypeBox: request bodies and decrypted plaintexts are read with them
 * (`readInput`), routes declare them, and the OpenAPI document is generated from them.
 * Response schemas describe what the presenters build; a test checks real responses against
 * them and type-checks a client generated from the document.
 *
 * Property names are the canonical ones; clients may send any casing, and the aliases listed
 * under `x-aliases` (names legacy clients use), see `canonicalise` in src/shared/input.ts.
 */

// ---- building blocks -------------------------------------------------------------------

const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}) => Type.Union([schema, Type.Null()], options);

/** A text field: a string, or a number read as its text (legacy clients send both). */
const Text = (maxLength: number, options: SchemaOptions = {}) => Type.Union([Type.String({ maxLength }), Type.Number()], options);

/** A numeric field: a JSON number, or its text (`"250.50"`). */
const Numeric = (options: SchemaOptions = {}) => Type.Union([Type.Number(), Type.String({ maxLength: 40 })], options);

const Timestamp = (options: SchemaOptions = {}) =>
  Type.String({
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?$',
    description: 'ISO 8601 in UTC without a zone designator',
    examples: ['2026-11-23T10:15:30.123'],
    ...options,
  });

const Code = <C extends string>(...codes: [C, ...C[]]) => (codes.length === 1 ? Type.Literal(codes[0]) : Type.Union(codes.map((c) => Type.Literal(c))));

// ---- request bodies (plain JSON) ----------------------------------------------------------

const linkFields = {
  Name: Text(200, { description: 'Shown on the payment form.', 'x-aliases': ['eventname'] }),
  Description: Text(2000, { description: 'Extra information about the form.' }),
  PaymentType: Text(10, { description: '`SC` (single charge), `MC` (multiple charge) or `SUB` (subscription).', 'x-aliases': ['paymentmethod'] }),
  AuthOption: Text(10, { description: '`AUTH` (3-D Secure) or `NOAUTH`.' }),
  Amount: Numeric({ description: 'Leave out (or empty) to let the customer enter the amount.' }),
  Mobile: Text(40),
  BackgroundImage: Text(2000, { description: 'http(s) URL of a background image.' }),
  Website: Text(2000, { description: 'http(s) URL the customer is sent to after paying.' }),
  Limit: Numeric({ description: 'Number of paying customers the link accepts (a whole number of at least 1).' }),
};

export const LinkCreateBody = Type.Object(
  {
    Name: linkFields.Name,
    Description: linkFields.Description,
    PaymentType: linkFields.PaymentType,
    Currency: Type.Optional(Text(10, { description: 'Currency code; default `NGN`.' })),
    AuthOption: linkFields.AuthOption,
    Amount: Type.Optional(linkFields.Amount),
    Mobile: Type.Optional(linkFields.Mobile),
    BackgroundImage: Type.Optional(linkFields.BackgroundImage),
    Website: Type.Optional(linkFields.Website),
    Limit: Type.Optional(linkFields.Limit),
  },
  {
    title: 'LinkCreateBody',
    description: 'Property names are matched case-insensitively; `null` counts as absent; unknown properties are ignored.',
    examples: [{ Name: 'Gym membership', Description: 'Monthly access', PaymentType: 'SC', Currency: 'NGN', AuthOption: 'AUTH', Amount: '5000', Limit: '10' }],
  },
);

export const LinkEditBody = Type.Object(
  {
    id: Type.Optional(Type.Unknown({ description: 'Accepted and ignored (legacy clients send it, often `null`): the path names the link.' })),
    Name: linkFields.Name,
    Description: linkFields.Description,
    PaymentType: linkFields.PaymentType,
    AuthOption: Type.Optional(linkFields.AuthOption),
    Amount: Type.Optional(linkFields.Amount),
    Mobile: Type.Optional(linkFields.Mobile),
    BackgroundImage: Type.Optional(linkFields.BackgroundImage),
    Website: Type.Optional(linkFields.Website),
    Limit: Type.Optional(linkFields.Limit),
  },
  {
    title: 'LinkEditBody',
    description: 'As create, without `Currency` (a link keeps its currency; a `Currency` sent is ignored).',
    examples: [{ id: null, Name: 'Gym membership', Description: 'Monthly access', PaymentType: 'MC', Amount: '7500.50' }],
  },
);

export const VerifyBody = Type.Object(
  { reference: Text(100, { description: 'The order reference.' }) },
  { title: 'VerifyBody', examples: [{ reference: 'ORD-1' }] },
);

export const EncryptedBody = Type.Object(
  {
    data: Type.String({
      minLength: 1,
      description: 'base64 of the RSA PKCS#1 v1.5 ciphertext of the plaintext JSON (blocks of at most k - 11 bytes, concatenated).',
    }),
  },
  { title: 'EncryptedBody' },
);

// ---- plaintexts of the Encrypted endpoints -----------------------------------------------

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
      mobile: Text(40, { description: 'With country code.' }),
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
    paymentOption: Text(20, { description: '`C` (card) or `PAYPAL`.', 'x-required-message': 'payment option is required!' }),
    currency: Type.Optional(Text(10, { description: 'Default `NGN`.' })),
  },
  { title: 'FeePlaintext', examples: [{ amount: 1000, paymentOption: 'C', currency: 'NGN' }] },
);

export const StatusPlaintext = Type.Object({ reference: Text(100) }, { title: 'StatusPlaintext', examples: [{ reference: 'ORD-1' }] });

export const TrackPlaintext = Type.Object(
  {
    orderReference: Text(100),
    event: Text(100),
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
    paymentOption: Text(20, { description: '`C` (card) or `PAYPAL`.', 'x-required-message': 'payment option is required!' }),
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

// ---- responses ---------------------------------------------------------------------------

const Audit = {
  dateCreated: Nullable(Timestamp()),
  dateUpdated: Nullable(Timestamp()),
  dateDeleted: Nullable(Timestamp()),
  createdBy: Type.Integer(),
  updatedBy: Nullable(Type.Integer()),
  deletedBy: Nullable(Type.Integer()),
};

export const Subsidiary = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    country: Type.String({ description: 'ISO 3166-1 alpha-2' }),
    supportEmail: Type.String(),
    customization: Type.Array(Type.Unknown(), { description: 'Always an array (empty when nothing is customised).' }),
  },
  { title: 'Subsidiary' },
);

export const PaymentLink = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    paymentType: Nullable(Type.String(), { description: 'null in create/edit answers; the type name in the list.' }),
    logo: Nullable(Type.String()),
    amount: Nullable(Type.Number(), { description: 'null: the customer enters the amount.' }),
    dateCreated: Timestamp(),
    reference: Type.String(),
    createdBy: Type.Null(),
    creatorEmail: Type.Null(),
    isActive: Type.Boolean(),
    currency: Type.String(),
    limit: Nullable(Type.Integer()),
    paymentLinkUrl: Type.String(),
    appEnvironmentId: Type.Integer(),
    paymentLinkType: Nullable(Type.String(), { description: 'The type name in create/edit answers; null in the list.' }),
    paymentLinkCode: Nullable(Type.String(), { description: '`SC`, `MC` or `SUB` in create/edit answers; null in the list.' }),
    description: Nullable(Type.String()),
  },
  { title: 'PaymentLink' },
);

const PaymentLinkTypeRecord = Type.Object({
  paymentLinkName: Type.String(),
  description: Type.String(),
  status: Type.Boolean(),
  code: Type.String(),
  id: Type.Integer(),
  ...Audit,
});

const FrequencyRecord = Type.Object({
  hours: Type.Integer(),
  days: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  isActive: Nullable(Type.Boolean()),
  id: Type.Integer(),
  ...Audit,
});

const BankRecord = Type.Object({
  name: Type.String(),
  countryId: Type.Integer(),
  bankCode: Type.String(),
  isMicrofinance: Nullable(Type.Boolean()),
  isMortgage: Nullable(Type.Boolean()),
  ussdBankCode: Nullable(Type.String()),
  logo: Type.String(),
  id: Type.Integer(),
  ...Audit,
});

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

const RecurringCancelResult = Type.Object({
  reference: Type.String(),
  state: Type.Union([Type.Literal('cancelled'), Type.Literal('completed'), Type.Literal('failed')], {
    description: '`cancelled`, or how the subscription had already ended (nothing to cancel).',
  }),
  cancelled: Type.Boolean({ description: 'true when the subscription is cancelled (also when it already was): nothing more is charged.' }),
});

/** Envelope A: `{ data, status, statusCode, message }`, with an example when `example` (its data) is given. */
const EnvelopeA = <T extends TSchema, C extends string>(data: T, codes: [C, ...C[]], message: string, description: string, example?: unknown) =>
  Type.Object(
    { data, status: Type.Literal('success'), statusCode: Code(...codes), message: Type.String({ examples: [message] }) },
    { description, ...(example === undefined ? {} : { examples: [{ data: example, status: 'success', statusCode: codes[0], message }] }) },
  );

// ---- examples (a test checks each against its schema) -------------------------------------

const exampleLink = {
  id: 42,
  name: 'Gym membership',
  paymentType: null,
  logo: null,
  amount: 5000,
  dateCreated: '2026-11-23T10:15:30.123',
  reference: 'PLABCDEFGH23456789',
  createdBy: null,
  creatorEmail: null,
  isActive: true,
  currency: 'NGN',
  limit: 10,
  paymentLinkUrl: 'https://checkout.example.test/pay/PLABCDEFGH23456789',
  appEnvironmentId: 7,
  paymentLinkType: 'Single Charge',
  paymentLinkCode: 'SC',
  description: 'Monthly access',
};
const exampleSubsidiary = { id: 3, name: 'Acme Stores', country: 'NG', supportEmail: 'support@acme.test', customization: [] };
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
    totalAmount: 1000,
    fee: 15,
  },
};

/** Envelope B (order status): snake_case, with the requery hints. */
const EnvelopeB = <T extends TSchema>(data: T, description: string) =>
  Type.Object(
    {
      is_final_status: Type.Boolean(),
      requery_needed: Type.Boolean(),
      requery_type: Nullable(Type.String()),
      data,
      status: Type.Literal('success'),
      status_code: Type.Literal('00'),
      message: Type.String({ examples: ['Order Status fetched successfully'] }),
    },
    { description },
  );

/** The error shape: the code is under `status_code` for codes 13 and 100, under `statusCode` for every other. */
export const ErrorBody = Type.Union(
  [
    Type.Object({ status: Type.Literal('failed'), statusCode: Type.String(), message: Type.String() }),
    Type.Object({ status: Type.Literal('failed'), status_code: Type.String(), message: Type.String() }),
  ],
  { title: 'ErrorBody' },
);

// ---- routes ------------------------------------------------------------------------------

const error = (description: string, example: Record<string, string>) => Type.Union(ErrorBody.anyOf, { description, examples: [example] });
const failed = errorBody;

const commonErrors = {
  400: error('Validation (`VAL400`, `100`) or encrypted data missing/undecryptable (`400`).', failed('VAL400', 'The Name field is required.')),
  401: error('Missing, malformed, unknown or expired api-key.', failed('401', 'api-key was not passed in the header.')),
  404: error('Not found (`02` payment link, `13` order, `404` path).', failed('13', 'Order not found at the moment')),
  429: error('Rate limited (see the Retry-After header).', failed('429', 'Too many requests, please try again later')),
  500: error('An unexpected fault (logged with the request id).', failed('500', 'An unexpected error occurred, please try again later.')),
};
const bodyErrors = {
  409: error('An Idempotency-Key whose first request is still running.', failed('409', 'A request with this Idempotency-Key is still being processed.')),
  413: error('Body over the size limit.', failed('413', 'The request body is too large.')),
  415: error('A body that is not application/json.', failed('415', 'Content-Type must be application/json.')),
  422: error('An Idempotency-Key reused with a different request.', failed('422', 'This Idempotency-Key was already used with a different request.')),
};
const forbidden = { 403: error('The private key is required.', failed('403', 'This operation requires the private key.')) };

const idempotencyHeader = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Optional, 1-255 visible characters: a repeat within 24 hours gets the stored answer.' })),
});
const IdParam = Type.Object({ id: Type.String({ description: 'The payment link id.' }) });
const ReferenceParam = Type.Object({ reference: Type.String({ description: 'The recurring payment reference (`recurringPaymentReference` of the order).' }) });
const security = [{ apiKey: [] }];

/** An Encrypted endpoint's body, with its plaintext described beside it. */
const encrypted = (plaintext: keyof typeof PLAINTEXTS) =>
  Type.Object(EncryptedBody.properties, {
    description: `Encrypted: \`data\` carries the plaintext \`${plaintext}\` (components.schemas.${plaintext}), encrypted under the encryption key. Property names in the plaintext are matched case-insensitively; null counts as absent; unknown properties are ignored.`,
    'x-plaintext': `#/components/schemas/${plaintext}`,
    examples: [{ data: 'k3Jc…base64…==' }],
  });

const linkAndSubsidiary = EnvelopeA(
  Type.Object({ paymentLink: PaymentLink, subsidiary: Subsidiary }),
  ['00'],
  'Payment details fetched successfully',
  'The link and its merchant.',
  {
    paymentLink: exampleLink,
    subsidiary: exampleSubsidiary,
  },
);

export const routeSchemas = {
  createLink: {
    tags: ['Payment links'],
    summary: 'Create a payment link; private key only',
    security,
    headers: idempotencyHeader,
    body: LinkCreateBody,
    response: { 200: linkAndSubsidiary, ...commonErrors, ...forbidden, ...bodyErrors },
  },
  editLink: {
    tags: ['Payment links'],
    summary: 'Edit a payment link (fields only; no Currency); private key only',
    security,
    headers: idempotencyHeader,
    params: IdParam,
    body: LinkEditBody,
    response: { 200: linkAndSubsidiary, ...commonErrors, ...forbidden, ...bodyErrors },
  },
  activateLink: {
    tags: ['Payment links'],
    summary: 'Activate an inactive payment link; private key only',
    security,
    headers: idempotencyHeader,
    params: IdParam,
    response: {
      200: EnvelopeA(Type.Null(), ['00'], 'Payment link status updated successfully', 'Activated.', null),
      ...commonErrors,
      ...forbidden,
      ...bodyErrors,
    },
  },
  disableLink: {
    tags: ['Payment links'],
    summary: 'Deactivate a payment link; private key only',
    security,
    headers: idempotencyHeader,
    params: IdParam,
    response: {
      200: EnvelopeA(Type.Null(), ['00'], 'Payment link status updated successfully', 'Deactivated.', null),
      ...commonErrors,
      ...forbidden,
      ...bodyErrors,
    },
  },
  cancelRecurring: {
    tags: ['Payment links'],
    summary: 'Cancel a recurring payment (subscription); private key only',
    description: 'Nothing more is charged. The same as the GraphQL mutation `cancelRecurringPayment`. Cancelling again answers the same.',
    security,
    headers: idempotencyHeader,
    params: ReferenceParam,
    response: {
      200: EnvelopeA(RecurringCancelResult, ['00'], 'Recurring payment cancelled successfully', 'The subscription and whether it is cancelled.', {
        reference: 'RPABCDEFGH2345678923',
        state: 'cancelled',
        cancelled: true,
      }),
      ...commonErrors,
      ...forbidden,
      ...bodyErrors,
    },
  },
  listLinks: {
    tags: ['Payment links'],
    summary: 'List payment links, newest first (a bare array, no envelope)',
    security,
    querystring: Type.Object({ id: Type.Optional(Type.String({ description: 'Narrow the list to one link; an unknown id answers 404 code 13.' })) }),
    response: {
      200: Type.Array(PaymentLink, {
        description: 'The links.',
        examples: [[{ ...exampleLink, paymentType: 'Single Charge', paymentLinkType: null, paymentLinkCode: null }]],
      }),
      ...commonErrors,
    },
  },
  linkTypes: {
    tags: ['Payment links'],
    summary: 'List payment link types',
    security,
    response: {
      200: Type.Object(
        {
          paymentLinkTypes: Type.Array(PaymentLinkTypeRecord),
          status: Type.Literal('success'),
          statusCode: Type.Literal('00'),
          message: Type.String({ examples: ['Payment link types retrieved successfully'] }),
        },
        { description: 'The types (not Envelope A: the list is under paymentLinkTypes).' },
      ),
      ...commonErrors,
    },
  },
  frequencies: {
    tags: ['Payment links'],
    summary: 'List charge frequencies',
    security,
    response: { 200: EnvelopeA(Type.Array(FrequencyRecord), ['00'], 'Operation successful', 'The frequencies.'), ...commonErrors },
  },
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
        subsidiaryFee: 15,
        customerFee: 0,
        totalChargedAmount: 1000,
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
  banks: {
    tags: ['Banks'],
    summary: 'List banks',
    security,
    response: { 200: EnvelopeA(Type.Array(BankRecord), ['00'], 'Operation successful', 'The banks.'), ...commonErrors },
  },
};

export type RouteSchemaName = keyof typeof routeSchemas;
