import {
  execute,
  GraphQLError,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLSchema,
  GraphQLString,
  parse,
  type ExecutionResult,
  type GraphQLResolveInfo,
} from 'graphql';
import { CompiledExecution } from '../../../src/graphql/compiled-execution';
import { DecimalScalar } from '../../../src/graphql/scalars';
import { selectedFieldNames } from '../../../src/graphql/selection';
import { DomainError } from '../../../src/shared/errors';

const seen: { names?: Set<string> } = {};

const Row = new GraphQLObjectType({
  name: 'Row',
  fields: {
    id: { type: new GraphQLNonNull(GraphQLInt) },
    amount: { type: DecimalScalar },
    status: { type: new GraphQLNonNull(GraphQLString) },
    secret: {
      type: GraphQLString,
      resolve: () => {
        throw new DomainError('forbidden', 'Not for this role.', 'FORBIDDEN');
      },
    },
  },
});

const schema = new GraphQLSchema({
  query: new GraphQLObjectType({
    name: 'Query',
    fields: {
      rows: {
        type: new GraphQLList(Row),
        args: { first: { type: GraphQLInt } },
        resolve: (_root, args: { first?: number }, _ctx, info: GraphQLResolveInfo) => {
          seen.names = selectedFieldNames(info);
          const rows = [
            { id: 1, amount: '12500.00', status: 'paid' },
            { id: 2, amount: '0.10', status: null },
            { id: 3, amount: '9999999999999999.999999', status: 'open' },
          ];
          return rows.slice(0, args.first ?? rows.length);
        },
      },
      total: { type: DecimalScalar, args: { min: { type: DecimalScalar } }, resolve: (_root, args: { min?: string }) => args.min ?? '1.50' },
      broken: { type: DecimalScalar, resolve: () => 0.1 },
      boom: {
        type: GraphQLString,
        resolve: () => {
          throw new Error('database gone');
        },
      },
    },
  }),
  mutation: new GraphQLObjectType({
    name: 'Mutation',
    fields: { touch: { type: GraphQLString, resolve: () => 'touched' } },
  }),
});

/** What a client sees of a result: data, and each error's message, path, locations, code and cause. */
function visible(result: ExecutionResult) {
  return {
    data: result.data,
    errors: result.errors?.map((e) => ({
      isGraphQLError: e instanceof GraphQLError,
      json: e.toJSON(),
      cause: e.originalError?.constructor.name,
    })),
  };
}

async function both(query: string, variables?: Record<string, unknown>, operation: 'query' | 'mutation' = 'query') {
  const execution = new CompiledExecution(schema);
  const document = parse(query);
  const args = { document, documentKey: query, operationName: null, operation, variables, context: {} };
  // The first run of a document is on graphql-js; the second runs it compiled.
  await execution.execute(args);
  const compiled = await execution.execute(args);
  const interpreted = await execute({ schema, document, variableValues: variables, contextValue: {} });
  return { compiled: visible(compiled), interpreted: visible(interpreted), execution };
}

describe('compiled execution of queries (graphql-jit) answers as graphql-js does', () => {
  it('bubbles a null of a non-null field to the nearest nullable parent, with the same error', async () => {
    const { compiled, interpreted, execution } = await both('{ rows { id status amount } }');
    expect(execution.compiledCount).toBe(1);
    expect(compiled).toEqual(interpreted);
    expect(compiled.data?.rows).toEqual([{ id: 1, status: 'paid', amount: '12500.00' }, null, expect.anything()]);
    expect(compiled.errors?.[0]?.json.path).toEqual(['rows', 1, 'status']);
  });

  it('keeps money as the exact decimal string, and refuses a float the Decimal scalar cannot represent', async () => {
    const { compiled, interpreted } = await both('{ rows { amount } broken }');
    expect(compiled).toEqual(interpreted);
    expect((compiled.data?.rows as { amount: string }[])[2]?.amount).toBe('9999999999999999.999999');
    expect(compiled.data?.broken).toBeNull();
    expect(compiled.errors?.[0]?.json.message).toBe('Decimal cannot represent this value');
  });

  it('keeps a domain error as the cause of a field error (its code is read from it) and a fault as a plain Error', async () => {
    const { compiled, interpreted } = await both('{ rows(first: 1) { id secret } boom }');
    expect(compiled).toEqual(interpreted);
    expect(compiled.errors?.map((e) => e.cause)).toEqual(['DomainError', 'Error']);
    expect(compiled.errors?.every((e) => e.isGraphQLError)).toBe(true);
    expect(compiled.errors?.[0]?.json.locations).toEqual([{ line: 1, column: 23 }]);
  });

  it('gives resolvers the fields and fragments selected below them', async () => {
    seen.names = undefined;
    const { compiled } = await both('{ rows { ...F } } fragment F on Row { id ... on Row { amount } }');
    expect(compiled.errors).toBeUndefined();
    expect([...(seen.names ?? [])].sort()).toEqual(['amount', 'id']);
  });

  it('refuses bad variables with graphql-js wording and the scalar code, and coerces good ones', async () => {
    const bad = await both('query ($min: Decimal) { total(min: $min) }', { min: '1.2.3' });
    expect(bad.compiled).toEqual(bad.interpreted);
    expect(bad.compiled.errors?.[0]?.json.extensions).toEqual({ code: 'VAL400' });
    const good = await both('query ($min: Decimal) { total(min: $min) }', { min: ' 7.25 ' });
    expect(good.compiled).toEqual(good.interpreted);
    expect(good.compiled.data).toEqual({ total: '7.25' });
  });

  it('runs mutations on graphql-js without compiling them', async () => {
    const { compiled, interpreted, execution } = await both('mutation { touch }', undefined, 'mutation');
    expect(compiled).toEqual(interpreted);
    expect(execution.compiledCount).toBe(0);
  });

  it('compiles a document the second time it comes, and keeps at most the given number of documents, the least recently used dropped', async () => {
    const execution = new CompiledExecution(schema, 2);
    const run = (key: string) =>
      execution.execute({ document: parse(`{ ${key} }`), documentKey: key, operationName: null, operation: 'query', variables: undefined, context: {} });
    await run('total');
    expect(execution.compiledCount).toBe(0);
    await run('total');
    expect(execution.compiledCount).toBe(1);
    await run('broken');
    await run('broken');
    await run('total');
    await run('boom');
    expect(execution.compiledCount).toBe(1);
    expect(await run('total')).toEqual({ data: { total: '1.50' } });
  });
});
