import {
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type ASTVisitor,
  type DocumentNode,
  type GraphQLSchema,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';
import { ApolloServerErrorCode } from '@apollo/server/errors';
import { containsNul, UNSTORABLE_TEXT } from '../shared/errors';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from './connection';
import { queryLimitsRule, type QueryLimits } from './limits';

/** The limits every document is checked against, over HTTP and WebSocket alike. */
export const QUERY_LIMITS: QueryLimits = {
  maxDepth: 12,
  maxAliases: 30,
  maxCost: 25_000,
  defaultListSize: DEFAULT_PAGE_SIZE,
  maxListSize: MAX_PAGE_SIZE,
};

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
    let document: DocumentNode;
    try {
      document = parse(query);
    } catch (err) {
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

/** NUL characters cannot be stored: refused before any resolver runs. */
export function unstorableTextError(query: string | undefined, variables: unknown): GraphQLError | null {
  if (containsNul(variables) || (query ?? '').includes('\u0000') || /\\u0000/i.test(query ?? '')) {
    return new GraphQLError(UNSTORABLE_TEXT, { extensions: { code: 'VAL400', http: { status: 200 } } });
  }
  return null;
}
