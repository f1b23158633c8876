import { buildSchema, parse, validate } from 'graphql';
import { depthAndSizeLimit } from '../../src/graphql/limits';

describe('depthAndSizeLimit', () => {
  const schema = buildSchema('type Node { id: ID, child: Node } type Query { node: Node }');
  const errorsOf = (query: string) => validate(schema, parse(query), [depthAndSizeLimit(3, 5)]).map((e) => e.message);

  it('accepts queries within the limits', () => {
    expect(errorsOf('{ node { child { id } } }')).toEqual([]);
  });

  it('refuses a query deeper than the limit, through fragments too', () => {
    expect(errorsOf('{ node { child { child { id } } } }')).toEqual(['The query is 4 levels deep; the limit is 3.']);
    expect(errorsOf('{ node { ...F } } fragment F on Node { child { child { id } } }')).toEqual(['The query is 4 levels deep; the limit is 3.']);
  });

  it('refuses a query selecting too many fields', () => {
    expect(errorsOf('{ a: node { id } b: node { id } c: node { id } }')).toEqual(['The query selects 6 fields; the limit is 5.']);
  });

  it('does not loop on a fragment that spreads itself', () => {
    expect(errorsOf('{ node { ...F } } fragment F on Node { id ...F }')).toEqual([]);
  });
});
