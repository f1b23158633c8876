import { Type, type SchemaOptions, type TSchema } from '@sinclair/typebox';
import { errorBody } from '../../protection/failure-shapes';

/**
 * Building blocks of the shim's schemas (src/rest/schemas.ts lists them all): field types,
 * the envelopes, the error shape and what every route declares.
 */

export const Nullable = <T extends TSchema>(schema: T, options: SchemaOptions = {}) => Type.Union([schema, Type.Null()], options);

/** A text field: a string, or a number read as its text (legacy clients send both). */
export const Text = (maxLength: number, options: SchemaOptions = {}) => Type.Union([Type.String({ maxLength }), Type.Number()], options);

/** A numeric field: a JSON number, or its text (`"250.50"`). */
export const Numeric = (options: SchemaOptions = {}) => Type.Union([Type.Number(), Type.String({ maxLength: 40 })], options);

export const Timestamp = (options: SchemaOptions = {}) =>
  Type.String({
    pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,6})?$',
    description: 'ISO 8601 in UTC without a zone designator',
    examples: ['2026-11-23T10:15:30.123'],
    ...options,
  });

export const Code = <C extends string>(...codes: [C, ...C[]]) => (codes.length === 1 ? Type.Literal(codes[0]) : Type.Union(codes.map((c) => Type.Literal(c))));

export const EncryptedBody = Type.Object(
  {
    data: Type.String({
      minLength: 1,
      description: 'base64 of the RSA PKCS#1 v1.5 ciphertext of the plaintext JSON (blocks of at most k - 11 bytes, concatenated).',
    }),
  },
  { title: 'EncryptedBody' },
);

export const Audit = {
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

export const exampleSubsidiary = { id: 3, name: 'Acme Stores', country: 'NG', supportEmail: 'support@acme.test', customization: [] };

/** Envelope A: `{ data, status, statusCode, message }`, with an example when `example` (its data) is given. */
export const EnvelopeA = <T extends TSchema, C extends string>(data: T, codes: [C, ...C[]], message: string, description: string, example?: unknown) =>
  Type.Object(
    { data, status: Type.Literal('success'), statusCode: Code(...codes), message: Type.String({ examples: [message] }) },
    { description, ...(example === undefined ? {} : { examples: [{ data: example, status: 'success', statusCode: codes[0], message }] }) },
  );

/** Envelope B (order status): snake_case, with the requery hints. */
export const EnvelopeB = <T extends TSchema>(data: T, description: string) =>
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

export const error = (description: string, example: Record<string, string>) => Type.Union(ErrorBody.anyOf, { description, examples: [example] });
export const failed = errorBody;

export const commonErrors = {
  400: error('Validation (`VAL400`, `100`) or encrypted data missing/undecryptable (`400`).', failed('VAL400', 'The Name field is required.')),
  401: error('Missing, malformed, unknown or expired api-key.', failed('401', 'api-key was not passed in the header.')),
  404: error('Not found (`02` payment link, `13` order, `404` path).', failed('13', 'Order not found at the moment')),
  429: error('Rate limited (see the Retry-After header).', failed('429', 'Too many requests, please try again later')),
  500: error('An unexpected fault (logged with the request id).', failed('500', 'An unexpected error occurred, please try again later.')),
};
export const bodyErrors = {
  409: error('An Idempotency-Key whose first request is still running.', failed('409', 'A request with this Idempotency-Key is still being processed.')),
  413: error('Body over the size limit.', failed('413', 'The request body is too large.')),
  415: error('A body that is not application/json.', failed('415', 'Content-Type must be application/json.')),
  422: error('An Idempotency-Key reused with a different request.', failed('422', 'This Idempotency-Key was already used with a different request.')),
};
export const forbidden = { 403: error('The private key is required.', failed('403', 'This operation requires the private key.')) };

export const idempotencyHeader = Type.Object({
  'idempotency-key': Type.Optional(Type.String({ description: 'Optional, 1-255 visible characters: a repeat within 24 hours gets the stored answer.' })),
});
export const security = [{ apiKey: [] }];
