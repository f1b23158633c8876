import { Type } from '@sinclair/typebox';
import {
  Audit,
  bodyErrors,
  commonErrors,
  EnvelopeA,
  exampleSubsidiary,
  forbidden,
  idempotencyHeader,
  Nullable,
  Numeric,
  security,
  Subsidiary,
  Text,
  Timestamp,
} from './common';

/** Payment links: the request bodies, the records answered and the routes. */

const linkFields = {
  Name: Text(200, { description: 'Shown on the payment form.' }),
  Description: Text(2000, { description: 'Extra information about the form.' }),
  PaymentType: Text(10, { description: '`SC` (single charge), `MC` (multiple charge) or `SUB` (subscription).' }),
  AuthOption: Text(10, { description: '`AUTH` (3-D Secure) or `NOAUTH`.' }),
  Amount: Numeric({ description: 'Leave out (or empty) to let the customer enter the amount.' }),
  Mobile: Text(40),
  BackgroundImage: Text(2000, { description: 'http(s) URL of a background image.' }),
  Website: Text(2000, { description: 'http(s) URL the customer is sent to after paying.' }),
  Limit: Numeric({ description: 'Number of paying customers the link accepts (a whole number of at least 1).' }),
  FrequencyId: Numeric({ description: 'Subscription links (`SUB`) only: the charge frequency (`GET /checkout/frequencies`); default 6, monthly.' }),
  NumberOfPayments: Numeric({ description: 'Subscription links (`SUB`) only: how many payments in all (1 to 1000); default 12.' }),
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
    FrequencyId: Type.Optional(linkFields.FrequencyId),
    NumberOfPayments: Type.Optional(linkFields.NumberOfPayments),
  },
  {
    title: 'LinkCreateBody',
    description: 'Property names are matched case-insensitively; `null` and empty strings count as absent; unknown properties are ignored.',
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
    FrequencyId: Type.Optional(linkFields.FrequencyId),
    NumberOfPayments: Type.Optional(linkFields.NumberOfPayments),
  },
  {
    title: 'LinkEditBody',
    description: 'As create, without `Currency` (a link keeps its currency; a `Currency` sent is ignored).',
    examples: [{ id: null, Name: 'Gym membership', Description: 'Monthly access', PaymentType: 'MC', Amount: '7500.50' }],
  },
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

const RecurringCancelResult = Type.Object({
  reference: Type.String(),
  state: Type.Union([Type.Literal('cancelled'), Type.Literal('completed'), Type.Literal('failed')], {
    description: '`cancelled`, or how the subscription had already ended (nothing to cancel).',
  }),
  cancelled: Type.Boolean({
    description:
      'true when the subscription is cancelled (also when it already was): nothing more is sent to the processor (see the message for a renewal already sent).',
  }),
});

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

const IdParam = Type.Object({ id: Type.String({ description: 'The payment link id.' }) });
const ReferenceParam = Type.Object({ reference: Type.String({ description: 'The recurring payment reference (`recurringPaymentReference` of the order).' }) });

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

export const linkRouteSchemas = {
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
    description:
      'Nothing more is sent to the processor. A renewal already sent when the cancel arrives is not taken back: the message then says so (`Recurring payment cancelled; a renewal already sent to the processor may still be charged`) and its order shows how it ends. The same as the GraphQL mutation `cancelRecurringPayment`. Cancelling again answers the same.',
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
};
