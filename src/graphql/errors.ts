import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { DomainError, ExpiredKeyError, isUnstorableText, UNSTORABLE_TEXT } from '../shared/errors';
import { PAYLOAD_DECRYPTION_FAILED, PayloadDecryptionError } from '../crypto/payload-decryptor';
import { DATABASE_UNAVAILABLE_MESSAGE, isDatabaseUnavailable } from '../db/unavailable';
import { ProcessorCallFailure } from '../payments/processor-time-limit';
import { isTokenLimitError, TOO_MANY_TOKENS } from './pipeline';
import { QUERY_TOO_COMPLEX } from './limits';

export const INTERNAL_ERROR_MESSAGE = 'An unexpected error occurred, please try again later.';

/** GraphQL `extensions.code` of a domain error: the REST code, so both adapters speak alike. */
function codeOf(err: DomainError): string {
  if (err.kind === 'unauthenticated') return 'UNAUTHENTICATED';
  if (err.kind === 'forbidden') return 'FORBIDDEN';
  if (err.kind === 'bad_input') return 'BAD_USER_INPUT';
  return err.code;
}

/**
 * What an error really is, under the GraphQLErrors that wrap it on the way out (a resolver's
 * located error, Apollo's ValidationError, graphql-ws's wrapper of a failed stream).
 */
export function rootCause(error: unknown): unknown {
  let cause = error;
  for (let i = 0; i < 10 && cause instanceof GraphQLError && cause.originalError; i++) cause = cause.originalError;
  return cause;
}

/**
 * True for a fault of ours (a bug, the database, a dependency): its message is not for the
 * client, which gets INTERNAL_SERVER_ERROR instead; the server logs it with the request id.
 */
export function isInternalError(error: unknown): boolean {
  const cause = rootCause(error);
  if (cause instanceof DomainError || cause instanceof GraphQLError || isUnstorableText(cause) || cause instanceof PayloadDecryptionError) return false;
  // The acquirer did not answer in time, or could not be reached: not a fault of the service (logged as a warning where it is answered).
  if (cause instanceof ProcessorCallFailure) return false;
  return !isRequestError(error);
}

/**
 * An error about the request itself that Apollo labelled (BAD_USER_INPUT of a variable a
 * scalar refused): it has no path, since nothing ran yet.
 */
function isRequestError(error: unknown): boolean {
  if (!(error instanceof GraphQLError) || error.path) return false;
  const code = error.extensions?.code;
  return typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR';
}

/**
 * The one error formatter of HTTP (Apollo's formatError) and WebSocket (graphql-ws onNext and
 * onError): domain errors with their codes, request errors (syntax, validation, limits) as
 * GraphQL describes them, everything else masked.
 */
export function formatGraphqlError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  if (formatted.extensions && 'http' in formatted.extensions) {
    // How Apollo sets the HTTP status; never part of the answer (graphql-ws would send it).
    const { http: _http, ...extensions } = formatted.extensions;
    formatted = { ...formatted, extensions };
  }
  const cause = rootCause(error);
  if (cause instanceof DomainError) {
    // An expired key is named as such here; the REST shim keeps the legacy wording for every failed key.
    const message = cause instanceof ExpiredKeyError ? cause.expiredMessage : cause.message;
    return { ...formatted, message, extensions: { code: codeOf(cause), kind: cause.kind } };
  }
  if (isUnstorableText(cause)) {
    return { ...formatted, message: UNSTORABLE_TEXT, extensions: { code: 'VAL400', kind: 'validation' } };
  }
  if (cause instanceof PayloadDecryptionError) {
    return { ...formatted, message: PAYLOAD_DECRYPTION_FAILED, extensions: { code: '400' } };
  }
  if (isTokenLimitError(cause)) {
    // Apollo's parse stopped at MAX_DOCUMENT_TOKENS: the same answer as over WebSocket.
    return { message: TOO_MANY_TOKENS, extensions: { code: QUERY_TOO_COMPLEX } };
  }
  if (cause instanceof GraphQLError) {
    // A code of the error itself (QUERY_TOO_COMPLEX, VAL400 of a scalar) wins over a wrapper's generic one.
    const own = cause.extensions?.code;
    return typeof own === 'string' && own !== formatted.extensions?.code ? { ...formatted, extensions: { ...formatted.extensions, code: own } } : formatted;
  }
  if (isRequestError(error)) return formatted;
  if (cause instanceof ProcessorCallFailure) {
    return { message: cause.message, locations: formatted.locations, path: formatted.path, extensions: { code: cause.code } };
  }
  if (isDatabaseUnavailable(cause)) {
    return { message: DATABASE_UNAVAILABLE_MESSAGE, locations: formatted.locations, path: formatted.path, extensions: { code: 'SERVICE_UNAVAILABLE' } };
  }
  return { message: INTERNAL_ERROR_MESSAGE, locations: formatted.locations, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}
