import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { unwrapResolverError } from '@apollo/server/errors';
import { DomainError, isUnstorableText, UNSTORABLE_TEXT } from '../shared/errors';
import { PAYLOAD_DECRYPTION_FAILED, PayloadDecryptionError } from '../crypto/payload-decryptor';

/** GraphQL `extensions.code` of a domain error: the REST code, so both adapters speak alike. */
function codeOf(err: DomainError): string {
  if (err.kind === 'unauthenticated') return 'UNAUTHENTICATED';
  if (err.kind === 'forbidden') return 'FORBIDDEN';
  return err.code;
}

export function formatGraphqlError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = unwrapResolverError(error);
  if (original instanceof DomainError) {
    return { ...formatted, message: original.message, extensions: { code: codeOf(original), kind: original.kind } };
  }
  if (isUnstorableText(original)) {
    return { ...formatted, message: UNSTORABLE_TEXT, extensions: { code: 'VAL400', kind: 'validation' } };
  }
  if (original instanceof PayloadDecryptionError) {
    return { ...formatted, message: PAYLOAD_DECRYPTION_FAILED, extensions: { code: '400' } };
  }
  const code = formatted.extensions?.code;
  if (original instanceof GraphQLError || (typeof code === 'string' && code !== 'INTERNAL_SERVER_ERROR')) {
    return formatted;
  }
  return { message: 'An unexpected error occurred, please try again later.', locations: formatted.locations, path: formatted.path, extensions: { code: 'INTERNAL_SERVER_ERROR' } };
}
