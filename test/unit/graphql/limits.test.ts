import { buildSchema, getIntrospectionQuery, parse, print, validate, type IntrospectionOptions } from 'graphql';
import { isStandardIntrospectionQuery, queryLimitsRule, type QueryLimits } from '../../../src/graphql/limits';

const schema = buildSchema(`
  type Node { id: ID, child: Node, children: [Node!]!, page(first: Int): NodeConnection }
  type NodeEdge { cursor: String, node: Node }
  type NodeConnection { totalCount: Int, edges: [NodeEdge!]!, nodes: [Node!]! }
  type Query { node: Node, nodes(first: Int): NodeConnection, list(first: Int): [Node!]! }
`);
const limits: QueryLimits = { maxDepth: 4, maxAliases: 3, maxCost: 1000, defaultListSize: 20, maxListSize: 100 };
const errorsOf = (query: string, l: QueryLimits = limits) => validate(schema, parse(query), [queryLimitsRule(l)]);
const messagesOf = (query: string, l?: QueryLimits) => errorsOf(query, l).map((e) => e.message);
const costOf = (query: string) => {
  const [error] = errorsOf(query, { ...limits, maxCost: 0 });
  return Number(/cost is (\d+)/.exec(error!.message)![1]);
};

/** `count` fragments, each spreading the previous one twice: 2^count fields once expanded. */
function fragmentBomb(count: number, field = 'id'): string {
  let text = `fragment F0 on Node { ${field} }\n`;
  for (let i = 1; i <= count; i++) text += `fragment F${i} on Node { ...F${i - 1} ...F${i - 1} }\n`;
  return `{ node { ...F${count} } }\n${text}`;
}

describe('queryLimitsRule', () => {
  it('accepts a document within the limits', () => {
    expect(messagesOf('{ node { child { id } } }')).toEqual([]);
  });

  it('refuses a document deeper than the limit, through fragments too, with QUERY_TOO_COMPLEX', () => {
    const errors = errorsOf('{ node { child { child { child { id } } } } }');
    expect(errors.map((e) => [e.message, e.extensions.code])).toEqual([['The query is 5 levels deep; the limit is 4.', 'QUERY_TOO_COMPLEX']]);
    expect(messagesOf('{ node { ...F } } fragment F on Node { child { child { child { id } } } }')).toEqual(['The query is 5 levels deep; the limit is 4.']);
    expect(messagesOf('{ node { ... on Node { child { child { child { id } } } } } }')).toEqual(['The query is 5 levels deep; the limit is 4.']);
  });

  it('counts aliases where fragments are spread', () => {
    expect(messagesOf('{ a: node { id } b: node { id } c: node { id } }')).toEqual([]);
    expect(messagesOf('{ a: node { id } b: node { id } c: node { id } d: node { id } }')).toEqual(['The query has 4 aliases; the limit is 3.']);
    expect(messagesOf('{ node { ...F ...G } } fragment F on Node { a: id b: id } fragment G on Node { ...F }')).toEqual([
      'The query has 4 aliases; the limit is 3.',
    ]);
  });

  it('costs lists by their first argument, the default page size without it, and multiplies nested lists', () => {
    expect(costOf('{ node { id } }')).toBe(2);
    expect(costOf('{ list(first: 5) { id } }')).toBe(1 + 5 * 1);
    expect(costOf('{ list { id } }')).toBe(1 + 20 * 1);
    // A connection passes its size on to its edges; a variable counts as the largest page.
    expect(costOf('{ nodes(first: 10) { totalCount edges { node { id } } } }')).toBe(1 + (1 + (1 + 10 * (1 + 1))));
    expect(costOf('query ($n: Int) { nodes(first: $n) { edges { node { id } } } }')).toBe(1 + (1 + 100 * (1 + 1)));
    expect(costOf('{ list(first: 5) { children { id } } }')).toBe(1 + 5 * (1 + 20 * 1));
    // Same result through a fragment on the connection.
    expect(costOf('{ nodes(first: 10) { ...C } } fragment C on NodeConnection { totalCount edges { node { id } } }')).toBe(1 + (1 + (1 + 10 * (1 + 1))));
    expect(messagesOf('{ list(first: 100) { children { children { id } } } }')).toEqual([
      `The query's estimated cost is ${1 + 100 * (1 + 20 * (1 + 20))}; the limit is 1000.`,
    ]);
  });

  it('a fragment bomb is refused at once, each fragment measured once', () => {
    const bomb = fragmentBomb(30);
    expect(Buffer.byteLength(bomb)).toBeLessThan(1400);
    // 2^30 fragment spreads: an exact cost proves each fragment was measured once (walking
    // them would never finish); how fast is the bench's business, not this test's.
    expect(messagesOf(bomb)).toEqual(["The query's estimated cost is 1073741825; the limit is 1000."]);
    // With aliases inside, the count explodes as well, and is still computed at once.
    expect(messagesOf(fragmentBomb(60, 'a: id'))).toEqual([
      `The query has more than ${Number.MAX_SAFE_INTEGER} aliases; the limit is 3.`,
      `The query's estimated cost is more than ${Number.MAX_SAFE_INTEGER}; the limit is 1000.`,
    ]);
  });

  it('does not loop on fragment cycles', () => {
    expect(messagesOf('{ node { ...F } } fragment F on Node { id ...F }')).toEqual([]);
    expect(messagesOf('{ node { ...F } } fragment F on Node { child { ...G } } fragment G on Node { id ...F }')).toEqual([]);
  });

  it('exempts the introspection query of getIntrospectionQuery(), whatever its options', () => {
    const flags = [
      'descriptions',
      'specifiedByUrl',
      'directiveIsRepeatable',
      'schemaDescription',
      'inputValueDeprecation',
      'experimentalDirectiveDeprecation',
      'oneOf',
    ] as const;
    for (let mask = 0; mask < 2 ** flags.length; mask++) {
      const options: IntrospectionOptions = Object.fromEntries(flags.map((f, i) => [f, Boolean(mask & (1 << i))]));
      const document = parse(getIntrospectionQuery(options));
      expect(isStandardIntrospectionQuery(document)).toBe(true);
      expect(validate(schema, document, [queryLimitsRule(limits)])).toEqual([]);
    }
    for (const typeDepth of [0, 3, 20, 100]) expect(isStandardIntrospectionQuery(parse(getIntrospectionQuery({ typeDepth })))).toBe(true);
    // Reformatted (as tools minify it) is the same document.
    expect(isStandardIntrospectionQuery(parse(print(parse(getIntrospectionQuery())).replace(/\s+/g, ' ')))).toBe(true);
  });

  it('other introspection documents obey the limits', () => {
    const standard = getIntrospectionQuery();
    // One more level of ofType than any option produces inside TypeRef, or an extra field: not exempt.
    const altered = standard.replace(
      'fragment TypeRef on __Type {\n      kind',
      'fragment TypeRef on __Type {\n      kind\n      a: name b: name c: name d: name',
    );
    expect(isStandardIntrospectionQuery(parse(altered))).toBe(false);
    expect(messagesOf(altered).some((m) => m.includes('levels deep'))).toBe(true);
    const deep = `{ __schema { types { ${'ofType { '.repeat(20)}name${' }'.repeat(20)} } } }`;
    expect(messagesOf(deep)).toEqual(['The query is 23 levels deep; the limit is 4.']);
  });
});
