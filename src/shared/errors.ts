/**
 * The domain's one error vocabulary. Domain services throw these; each adapter (REST shim,
 * GraphQL, checkout pages, CLI) maps them once to its own shape.
 */
export type DomainErrorKind =
  | 'validation' // bad or missing input (REST VAL400)
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
export const unsupported = (param: string, code = 'VAL400'): DomainError =>
  new DomainError('unsupported', `${param} is currently not supported.`, code);
export const notFound = (message: string, code: string): DomainError => new DomainError('not_found', message, code);
export const conflict = (message: string, code = 'VAL400'): DomainError => new DomainError('conflict', message, code);

export const API_KEY_MISSING = 'api-key was not passed in the header.';
export const unauthenticated = (): DomainError => new DomainError('unauthenticated', API_KEY_MISSING, '401');
export const forbidden = (message: string): DomainError => new DomainError('forbidden', message, '403');
