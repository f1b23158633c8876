/**
 * The domain's one error vocabulary. Domain services throw these; each adapter (REST shim,
 * GraphQL, checkout pages, CLI) maps them once to its own shape.
 */
export type DomainErrorKind =
  | 'validation' // bad or missing input (REST VAL400)
  | 'bad_input' // a list filter or argument out of its bounds (REST VAL400, GraphQL BAD_USER_INPUT)
  | 'unsupported' // a value the service does not support (REST "<Param> is currently not supported.")
  | 'not_found'
  | 'unauthenticated'
  | 'forbidden'
  | 'conflict'
  | 'payment_declined';

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
    message: string,
    /** The code the legacy REST interface uses for this failure (`VAL400`, `13`, `02`, `100`, …). */
    readonly code: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export const validationError = (message: string): DomainError => new DomainError('validation', message, 'VAL400');
export const requiredField = (field: string): DomainError => validationError(`The ${field} field is required.`);
export const unsupported = (param: string, code = 'VAL400'): DomainError => new DomainError('unsupported', `${param} is currently not supported.`, code);
export const notFound = (message: string, code: string): DomainError => new DomainError('not_found', message, code);
export const conflict = (message: string, code = 'VAL400'): DomainError => new DomainError('conflict', message, code);

export const API_KEY_MISSING = 'api-key was not passed in the header.';
export const unauthenticated = (): DomainError => new DomainError('unauthenticated', API_KEY_MISSING, '401');

/** What GraphQL says of a key that was replaced and whose grace period is over. */
export const API_KEY_EXPIRED = 'This api-key has expired: use the keys that replaced it.';

/**
 * A key that existed and has expired. Its `message` is the legacy wording (the REST shim answers
 * every failed key alike); `expiredMessage` is what the GraphQL interface says instead.
 */
export class ExpiredKeyError extends DomainError {
  readonly expiredMessage = API_KEY_EXPIRED;
  constructor() {
    super('unauthenticated', API_KEY_MISSING, '401');
    this.name = 'ExpiredKeyError';
  }
}
export const forbidden = (message: string): DomainError => new DomainError('forbidden', message, '403');

/**
 * A valid dashboard session asking for an environment its member does not work in (a member who
 * works in test only, asking for live): refused as forbidden, but it is no failed authentication.
 */
export class EnvironmentOutOfReachError extends DomainError {
  /** `message` short enough for a WebSocket close reason (123 bytes at most). */
  constructor(
    message: string,
    readonly closeReason: string,
  ) {
    super('forbidden', message, '403');
    this.name = 'EnvironmentOutOfReachError';
  }
}

/** The message for text PostgreSQL cannot store (a NUL character), whichever adapter it came through. */
export const UNSTORABLE_TEXT = 'The request contains a character that is not allowed (NUL).';

/**
 * PostgreSQL refuses NUL characters: in a bound text parameter the driver's message is
 * malformed (08P01), in text 22021, as \u0000 in JSON 22P05. Input checks refuse them first;
 * this recognises any that got through, so the answer is a validation error (and the
 * transaction rolled back) rather than a 500.
 */
export function isUnstorableText(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === '22021' || code === '22P05' || code === '08P01';
}

/** The message for text holding half of a UTF-16 surrogate pair (JSON's `"\ud800"`): it is no character, and a JSON column refuses it. */
export const UNPAIRED_SURROGATE_TEXT = 'The request contains a character that is not allowed (an unpaired surrogate).';

const UNPAIRED_SURROGATE = /\p{Cs}/u;

/** Why a string cannot be stored as it is: a NUL character, an unpaired surrogate, or null when it can. */
export function unstorableIn(text: string): 'nul' | 'surrogate' | null {
  if (text.includes('\u0000')) return 'nul';
  return UNPAIRED_SURROGATE.test(text) ? 'surrogate' : null;
}

/** What a request value holds anywhere (strings, arrays, object keys and values) that cannot be stored, or null. */
export function unstorableValue(value: unknown, depth = 0): 'nul' | 'surrogate' | null {
  if (typeof value === 'string') return unstorableIn(value);
  if (depth > 32 || value === null || typeof value !== 'object') return null;
  const entries = Array.isArray(value) ? value.map((v) => ['', v] as const) : Object.entries(value as Record<string, unknown>);
  for (const [k, v] of entries) {
    const found = unstorableIn(k) ?? unstorableValue(v, depth + 1);
    if (found) return found;
  }
  return null;
}
