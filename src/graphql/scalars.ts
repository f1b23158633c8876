import { GraphQLError, GraphQLScalarType, Kind } from 'graphql';

const DECIMAL = /^-?\d{1,16}(\.\d{1,6})?$/;

/**
 * Money and rates as exact decimal strings ("12500.00"): never a binary float on the wire,
 * so no client rounds a sum.
 */
export const DecimalScalar = new GraphQLScalarType({
  name: 'Decimal',
  description: 'An exact decimal number, as a string such as "12500.00".',
  serialize(value: unknown): string {
    if (typeof value === 'string' && DECIMAL.test(value)) return value;
    if (value !== null && typeof value === 'object' && 'toFixed' in value) return String(value);
    throw new GraphQLError('Decimal cannot represent this value');
  },
  parseValue(value: unknown): string {
    if (typeof value === 'string' && DECIMAL.test(value.trim())) return value.trim();
    // Inputs are lenient: a JSON number is read from its shortest decimal text.
    if (typeof value === 'number' && Number.isFinite(value) && DECIMAL.test(String(value))) return String(value);
    throw new GraphQLError('Decimal must be a string such as "12500.00"', { extensions: { code: 'VAL400' } });
  },
  parseLiteral(ast): string {
    if ((ast.kind === Kind.STRING || ast.kind === Kind.INT || ast.kind === Kind.FLOAT) && DECIMAL.test(ast.value)) return ast.value;
    throw new GraphQLError('Decimal must be a string such as "12500.00"', { extensions: { code: 'VAL400' } });
  },
});
