import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import { execute, getVariableValues, GraphQLError, type DocumentNode, type ExecutionResult, type GraphQLSchema } from 'graphql';
import { compileQuery, isCompiledQuery, type CompiledQuery } from 'graphql-jit';

/** Most compiled documents kept; the least recently used is dropped past it. */
export const MAX_COMPILED_DOCUMENTS = 500;

/** A compiled query, or how to run the document on graphql-js: seen once so far, or not compilable. */
type Compiled = CompiledQuery | 'seen-once' | 'interpret';
type GatewayInterface = ApolloServerOptionsWithGateway<object>['gateway'];
type GatewayExecutor = NonNullable<Awaited<ReturnType<GatewayInterface['load']>>['executor']>;

/**
 * Query operations run as graphql-jit compiled them (one compilation per document and
 * operation name, from its second run on, kept in a bounded LRU); mutations, and any document graphql-jit refuses to
 * compile, run on graphql-js `execute`. Apollo validates every document (GraphQL's rules, the
 * query limits, the introspection switch) before this runs, as without it. Subscriptions are
 * not here: graphql-ws runs them on graphql-js.
 */
export class CompiledExecution {
  private readonly compiled = new Map<string, Compiled>();

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly maxDocuments = MAX_COMPILED_DOCUMENTS,
  ) {}

  async execute(args: {
    document: DocumentNode;
    /** What identifies the document (Apollo's sha-256 of its text). */
    documentKey: string;
    operationName: string | null;
    operation: 'query' | 'mutation' | 'subscription';
    variables: Record<string, unknown> | undefined;
    context: unknown;
  }): Promise<ExecutionResult> {
    const { document, operationName, variables, context } = args;
    const compiled = args.operation === 'query' ? this.compiledFor(args.documentKey, document, operationName) : 'interpret';
    if (compiled === 'interpret' || compiled === 'seen-once') {
      return execute({ schema: this.schema, document, operationName, variableValues: variables, contextValue: context });
    }
    const operationAst = document.definitions.find((d) => d.kind === 'OperationDefinition' && (operationName === null || d.name?.value === operationName));
    if (operationAst?.kind === 'OperationDefinition' && operationAst.variableDefinitions?.length) {
      // Variables are refused as graphql-js words it (messages, codes of a scalar's parseValue).
      const coerced = getVariableValues(this.schema, operationAst.variableDefinitions, variables ?? {});
      if (coerced.errors) return { errors: coerced.errors };
    }
    return asGraphqlJsResult(await compiled.query(undefined, context, variables ?? {}));
  }

  private compiledFor(key: string, document: DocumentNode, operationName: string | null): Compiled {
    const cacheKey = `${operationName ?? ''}\u0000${key}`;
    const found = this.compiled.get(cacheKey);
    if (found !== undefined && found !== 'seen-once') {
      // Most recently used last: Map keeps insertion order.
      this.compiled.delete(cacheKey);
      this.compiled.set(cacheKey, found);
      return found;
    }
    // Compiling costs more than one execution: a document is compiled the second time it comes,
    // so a stream of distinct documents costs about what it costs on graphql-js.
    if (found === undefined) return this.remember(cacheKey, 'seen-once');
    this.compiled.delete(cacheKey);
    let made: Compiled;
    try {
      const result = compileQuery(this.schema, document, operationName ?? undefined, { disablingCapturingStackErrors: true });
      made = isCompiledQuery(result) ? result : 'interpret';
    } catch {
      made = 'interpret';
    }
    return this.remember(cacheKey, made);
  }

  private remember(cacheKey: string, made: Compiled): Compiled {
    this.compiled.set(cacheKey, made);
    if (this.compiled.size > this.maxDocuments) this.compiled.delete(this.compiled.keys().next().value!);
    return made;
  }

  /** How many documents are compiled (for tests). */
  get compiledCount(): number {
    let n = 0;
    for (const c of this.compiled.values()) if (typeof c === 'object') n += 1;
    return n;
  }
}

/**
 * graphql-jit's errors as graphql-js makes them: a GraphQLError with the same message,
 * locations, path, extensions and original error (what error formatting and logging read).
 */
function asGraphqlJsResult(result: ExecutionResult): ExecutionResult {
  if (!result.errors?.length) return result;
  const errors = result.errors.map((e) => {
    const error = new GraphQLError(e.message, { path: e.path, originalError: e.originalError ?? causeOf(e), extensions: e.extensions });
    if (e.locations) (error as { locations?: unknown }).locations = e.locations;
    return error;
  });
  return { ...result, errors };
}

const NULL_IN_NON_NULL = /^Cannot return null for non-nullable field /;

/**
 * The cause graphql-js gives an error graphql-jit raises itself, without one: a null in a
 * non-null field is a plain Error (a fault of ours: masked and logged), a value a scalar
 * cannot serialise is the scalar's GraphQLError (its message is shown).
 */
function causeOf(error: GraphQLError): Error | undefined {
  if (!error.path) return undefined;
  return NULL_IN_NON_NULL.test(error.message) ? new Error(error.message) : new GraphQLError(error.message);
}

/**
 * The Apollo gateway that gives Apollo our schema and an executor running CompiledExecution.
 * The schema never changes while the server runs.
 */
export function compiledExecutionGateway(schema: GraphQLSchema): GatewayInterface {
  const execution = new CompiledExecution(schema);
  const executor: GatewayExecutor = (request) =>
    execution.execute({
      document: request.document,
      documentKey: request.queryHash,
      operationName: request.operationName,
      operation: request.operation.operation,
      variables: request.request.variables,
      context: request.context,
    });
  return {
    load: async () => {
      return { executor };
    },
    onSchemaLoadOrUpdate: (callback) => {
      callback({ apiSchema: schema, coreSupergraphSdl: '' });
      return () => undefined;
    },
    stop: async () => undefined,
  };
}
