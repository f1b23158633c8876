/** JSON schemas of the shim's routes: the server validates with them and the OpenAPI document is generated from them. */

const apiKeyHeader = {
  type: 'object',
  properties: {
    'api-key': { type: 'string', description: 'Public or private key (PGW-PUBLICKEY-… / PGW-SECRETKEY-…)' },
    'idempotency-key': { type: 'string', description: 'Optional, 1-255 visible characters: repeats within 24 hours get the stored answer.' },
  },
} as const;

export const encryptedBody = {
  type: 'object',
  description: 'An Encrypted endpoint: `data` is the base64 RSA PKCS#1 v1.5 ciphertext of the plaintext JSON (see the README).',
  properties: { data: { type: 'string' } },
} as const;

const stringOrNumber = { anyOf: [{ type: 'number' }, { type: 'string' }, { type: 'null' }] } as const;
/** Legacy clients send numbers for string fields too; a number is read as its text. */
const optionalString = { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] } as const;

export const linkBody = {
  description: 'Property names are matched case-insensitively; unknown properties are refused.',
  properties: {
    Name: optionalString,
    Description: optionalString,
    PaymentType: { ...optionalString, description: 'SC, MC or SUB' },
    Currency: { ...optionalString, description: 'create only; default NGN' },
    AuthOption: { ...optionalString, description: 'AUTH or NOAUTH' },
    Amount: stringOrNumber,
    Mobile: optionalString,
    BackgroundImage: optionalString,
    Website: optionalString,
    Limit: stringOrNumber,
  },
} as const;

const idParam = { type: 'object', properties: { id: { type: 'string', description: 'payment link id' } }, required: ['id'] } as const;

export const routeSchemas = {
  createLink: { tags: ['Payment links'], summary: 'Create a payment link', headers: apiKeyHeader, body: linkBody },
  editLink: { tags: ['Payment links'], summary: 'Edit a payment link (no Currency)', headers: apiKeyHeader, params: idParam, body: linkBody },
  activateLink: { tags: ['Payment links'], summary: 'Activate an inactive payment link', headers: apiKeyHeader, params: idParam },
  disableLink: { tags: ['Payment links'], summary: 'Deactivate a payment link', headers: apiKeyHeader, params: idParam },
  listLinks: {
    tags: ['Payment links'],
    summary: 'List payment links (a bare array)',
    headers: apiKeyHeader,
    querystring: { type: 'object', properties: { id: { type: 'string', description: 'narrow the list to one link' } } },
  },
  linkTypes: { tags: ['Payment links'], summary: 'List payment link types', headers: apiKeyHeader },
  frequencies: { tags: ['Payment links'], summary: 'List charge frequencies', headers: apiKeyHeader },
  createOrder: { tags: ['Orders'], summary: 'Create an order (Encrypted)', headers: apiKeyHeader, body: encryptedBody },
  fee: { tags: ['Orders'], summary: 'Quote the fee of a payment option (Encrypted)', headers: apiKeyHeader, body: encryptedBody },
  status: { tags: ['Orders'], summary: 'Query an order status (Encrypted)', headers: apiKeyHeader, body: encryptedBody },
  track: { tags: ['Orders'], summary: 'Record a timeline event on an order (Encrypted)', headers: apiKeyHeader, body: encryptedBody },
  pay: { tags: ['Orders'], summary: 'Pay an order by card or PayPal (Encrypted)', headers: apiKeyHeader, body: encryptedBody },
  verify: {
    tags: ['Orders'],
    summary: 'Verify an order (plain JSON, private key only)',
    headers: apiKeyHeader,
    body: { type: 'object', properties: { reference: { type: 'string' } } },
  },
  banks: { tags: ['Banks'], summary: 'List banks', headers: apiKeyHeader },
} as const;
