import {
  GraphQLError,
  Lexer,
  parse,
  Source,
  TokenKind,
  specifiedRules,
  validate,
  type ASTVisitor,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import { UNPAIRED_SURROGATE_TEXT, unstorableIn, unstorableValue, UNSTORABLE_TEXT } from '../shared/errors';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './connection';
import { QUERY_TOO_COMPLEX, queryLimitsRule, type QueryLimits } from './limits';

/** The limits every document is checked against, over HTTP and WebSocket alike. */
export const QUERY_LIMITS: QueryLimits = {
  maxDepth: 12,
  maxAliases: 30,
  maxCost: 25_000,
  defaultListSize: DEFAULT_PAGE_SIZE,
  maxListSize: MAX_PAGE_SIZE,
};

/** Largest document (UTF-8 bytes) accepted; a larger one is refused before it is parsed. */
export const MAX_DOCUMENT_BYTES = 100 * 1024;
/** Most tokens a document may have: graphql-js stops parsing there (`parse(…, { maxTokens })`). */
export const MAX_DOCUMENT_TOKENS = 10_000;
/** graphql-js's own message when `maxTokens` stops a parse (16.x spells it "more that"). */
const TOKEN_LIMIT_MESSAGE = /^Syntax Error: Document contains more tha[nt] \d+ tokens\. Parsing aborted\.$/;

export const DOCUMENT_TOO_LARGE = `The document is larger than ${MAX_DOCUMENT_BYTES / 1024} KiB; the limit is ${MAX_DOCUMENT_BYTES / 1024} KiB.`;
export const TOO_MANY_TOKENS = `The document has more than ${MAX_DOCUMENT_TOKENS} tokens; the limit is ${MAX_DOCUMENT_TOKENS}.`;

/**
 * The refusal (QUERY_TOO_COMPLEX) of a document over MAX_DOCUMENT_BYTES or MAX_DOCUMENT_TOKENS,
 * decided before it is parsed: the size first, then a count of its tokens by the lexer alone
 * (linear, stopping at the limit). Null when the document is within both limits, or is not text.
 */
export function documentTooLarge(query: unknown): GraphQLError | null {
  if (typeof query !== 'string') return null;
  // A string's UTF-8 size is at least its length and at most three times it: count bytes only in between.
  const bytes = query.length <= MAX_DOCUMENT_BYTES / 3 ? 0 : query.length > MAX_DOCUMENT_BYTES ? Infinity : Buffer.byteLength(query, 'utf8');
  if (bytes > MAX_DOCUMENT_BYTES) return new GraphQLError(DOCUMENT_TOO_LARGE, { extensions: { code: QUERY_TOO_COMPLEX } });
  // Every token is at least one character long.
  return query.length > MAX_DOCUMENT_TOKENS && moreTokensThan(query, MAX_DOCUMENT_TOKENS) ? tooManyTokens() : null;
}

function moreTokensThan(query: string, limit: number): boolean {
  const lexer = new Lexer(new Source(query));
  try {
    for (let n = 0; lexer.advance().kind !== TokenKind.EOF;) if (++n > limit) return true;
  } catch {
    // A lexical error: the parser reports it, as for any other document.
  }
  return false;
}

/** True for the error graphql-js raises when a document has more than `maxTokens` tokens. */
export function isTokenLimitError(error: unknown): boolean {
  return error instanceof GraphQLError && TOKEN_LIMIT_MESSAGE.test(error.message);
}

/** The refusal of a document with too many tokens, as both transports answer it. */
export const tooManyTokens = (): GraphQLError => new GraphQLError(TOO_MANY_TOKENS, { extensions: { code: QUERY_TOO_COMPLEX } });

export const INTROSPECTION_DISABLED = 'INTROSPECTION_DISABLED';

/** With GRAPHQL_INTROSPECTION off: `__schema` and `__type` are refused (`__typename` stays). */
const noIntrospection: ValidationRule = (context: ValidationContext): ASTVisitor => ({
  Field(node) {
    if (node.name.value === '__schema' || node.name.value === '__type') {
      context.reportError(
        new GraphQLError('GraphQL introspection is disabled on this server.', { nodes: [node], extensions: { code: INTROSPECTION_DISABLED } }),
      );
    }
  },
});

/**
 * What every GraphQL document goes through before it runs, whatever the transport: GraphQL's
 * own validation plus ours (limits, the introspection switch), then the NUL check. Apollo
 * runs the validation rules for HTTP; `prepare` does the same steps for graphql-ws.
 */
export class OperationPipeline {
  /** Ours, run after GraphQL's specified rules. */
  readonly validationRules: readonly ValidationRule[];

  constructor(
    private readonly schema: GraphQLSchema,
    options: { introspection: boolean; limits?: QueryLimits },
  ) {
    this.validationRules = [queryLimitsRule(options.limits ?? QUERY_LIMITS), ...(options.introspection ? [] : [noIntrospection])];
  }

  /** The document to execute, or the errors refusing it (coded as Apollo codes them over HTTP). */
  prepare(query: unknown, variables: unknown): { document: DocumentNode } | GraphQLError[] {
    if (typeof query !== 'string' || query.trim() === '') {
      return [new GraphQLError('The operation must contain a non-empty query.', { extensions: { code: ApolloServerErrorCode.BAD_REQUEST } })];
    }
    const tooLarge = documentTooLarge(query);
    if (tooLarge) return [tooLarge];
    let document: DocumentNode;
    try {
      document = parse(query, { maxTokens: MAX_DOCUMENT_TOKENS });
    } catch (err) {
      if (isTokenLimitError(err)) return [tooManyTokens()];
      const syntax = err as GraphQLError;
      return [
        new GraphQLError(syntax.message, {
          source: syntax.source,
          positions: syntax.positions,
          originalError: syntax,
          extensions: { code: ApolloServerErrorCode.GRAPHQL_PARSE_FAILED },
        }),
      ];
    }
    const invalid = validate(this.schema, document, [...specifiedRules, ...this.validationRules]);
    if (invalid.length > 0) {
      return invalid.map(
        (e) => new GraphQLError(e.message, { nodes: e.nodes, originalError: e, extensions: { code: ApolloServerErrorCode.GRAPHQL_VALIDATION_FAILED } }),
      );
    }
    const unstorable = unstorableTextError(query, variables);
    if (unstorable) return [unstorable];
    return { document };
  }
}

/** NUL characters and unpaired surrogates cannot be stored: refused before any resolver runs. */
export function unstorableTextError(query: string | undefined, variables: unknown): GraphQLError | null {
  const text = query ?? '';
  const found = unstorableValue(variables) ?? unstorableIn(text) ?? (/\\u0000/i.test(text) ? 'nul' : null);
  if (found === null) return null;
  return new GraphQLError(found === 'nul' ? UNSTORABLE_TEXT : UNPAIRED_SURROGATE_TEXT, { extensions: { code: 'VAL400', http: { status: 200 } } });
}
