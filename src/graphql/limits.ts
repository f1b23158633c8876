import {
  getIntrospectionQuery,
  getNamedType,
  GraphQLError,
  isInterfaceType,
  isListType,
  isNonNullType,
  isObjectType,
  Kind,
  parse,
  print,
  type ASTVisitor,
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLNamedType,
  type GraphQLSchema,
  type IntrospectionOptions,
  type SelectionSetNode,
  type ValidationContext,
  type ValidationRule,
} from 'graphql';

/** The `extensions.code` of a document refused by the limits below. */
export const QUERY_TOO_COMPLEX = 'QUERY_TOO_COMPLEX';

export interface QueryLimits {
  /** Deepest chain of nested fields (`{ a { b } }` is 2 deep). */
  maxDepth: number;
  /** Aliased fields, with a fragment's aliases counted each time it is spread. */
  maxAliases: number;
  /** Estimated cost (see `queryLimitsRule`). */
  maxCost: number;
  /** Items a list is assumed to hold when nothing says how many (the default page size). */
  defaultListSize: number;
  /** Items a page holds at most; the estimate for a `first` given by a variable. */
  maxListSize: number;
}

/** What one selection set weighs; fragments are measured once and the result reused. */
interface Measure {
  depth: number;
  aliases: number;
  cost: number;
}

const NOTHING: Measure = { depth: 0, aliases: 0, cost: 0 };

/**
 * A validation rule refusing documents that are too deep, have too many aliases or are too
 * expensive, with `extensions.code` QUERY_TOO_COMPLEX. Fragments count where they are
 * spread, but each fragment definition is walked once and its measure memoised, so a
 * document of fragments that spread each other many times is measured in time linear in its
 * size (and a fragment cycle, reported by GraphQL's own rules, cannot make the walk loop).
 *
 * Cost: every field costs 1; a field with a selection adds the cost of that selection, times
 * the number of items when it is a list. A field with a `first` argument is a page of that
 * many items (the default page size without it, the largest page when it is a variable): a
 * list field returns that many, a connection object passes the size on to its list fields
 * (`edges`). Any other list counts as `defaultListSize` items. Nested lists multiply.
 *
 * The introspection query of GraphQL tools (`getIntrospectionQuery()` with any options) is
 * exempt; every other introspection document obeys the limits.
 */
export function queryLimitsRule(limits: QueryLimits): ValidationRule {
  return (context: ValidationContext): ASTVisitor => ({
    Document(document) {
      if (isStandardIntrospectionQuery(document)) return false;
      const measurer = new DocumentMeasurer(context.getSchema(), document, limits);
      for (const def of document.definitions) {
        if (def.kind !== Kind.OPERATION_DEFINITION) continue;
        const m = measurer.selections(def.selectionSet, context.getSchema().getRootType(def.operation) ?? undefined, undefined);
        const refuse = (message: string) => context.reportError(new GraphQLError(message, { nodes: [def], extensions: { code: QUERY_TOO_COMPLEX } }));
        if (m.depth > limits.maxDepth) refuse(`The query is ${count(m.depth)} levels deep; the limit is ${limits.maxDepth}.`);
        if (m.aliases > limits.maxAliases) refuse(`The query has ${count(m.aliases)} aliases; the limit is ${limits.maxAliases}.`);
        if (m.cost > limits.maxCost) refuse(`The query's estimated cost is ${count(m.cost)}; the limit is ${limits.maxCost}.`);
      }
      return false; // the whole document is measured here; nothing left to visit
    },
  });
}

/** Measures of one document's selections, each fragment definition once per page size. */
export class DocumentMeasurer {
  private readonly fragments = new Map<string, FragmentDefinitionNode>();
  private readonly measured = new Map<string, Measure>();
  private readonly inProgress = new Set<string>();

  constructor(
    private readonly schema: GraphQLSchema,
    document: DocumentNode,
    private readonly limits: QueryLimits,
  ) {
    for (const def of document.definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) this.fragments.set(def.name.value, def);
  }

  /** `pageSize` is set inside a connection object: the size of its lists. */
  selections(set: SelectionSetNode, parentType: GraphQLNamedType | undefined, pageSize: number | undefined): Measure {
    let depth = 0;
    let aliases = 0;
    let cost = 0;
    for (const sel of set.selections) {
      let m: Measure;
      if (sel.kind === Kind.FIELD) m = this.field(sel, parentType, pageSize);
      else if (sel.kind === Kind.INLINE_FRAGMENT) {
        const type = sel.typeCondition ? (this.schema.getType(sel.typeCondition.name.value) ?? undefined) : parentType;
        m = this.selections(sel.selectionSet, type, pageSize);
      } else m = this.fragment(sel.name.value, pageSize);
      depth = Math.max(depth, m.depth);
      aliases += m.aliases;
      cost += m.cost;
    }
    return { depth, aliases, cost };
  }

  private fragment(name: string, pageSize: number | undefined): Measure {
    const key = `${name}/${pageSize ?? ''}`;
    const known = this.measured.get(key);
    if (known) return known;
    const def = this.fragments.get(name);
    // An unknown fragment or a cycle is reported by GraphQL's own rules; here it weighs nothing.
    if (!def || this.inProgress.has(key)) return NOTHING;
    this.inProgress.add(key);
    const m = this.selections(def.selectionSet, this.schema.getType(def.typeCondition.name.value) ?? undefined, pageSize);
    this.inProgress.delete(key);
    this.measured.set(key, m);
    return m;
  }

  private field(node: FieldNode, parentType: GraphQLNamedType | undefined, pageSize: number | undefined): Measure {
    const aliases = node.alias ? 1 : 0;
    if (!node.selectionSet) return { depth: 1, aliases, cost: 1 };
    const def = parentType && (isObjectType(parentType) || isInterfaceType(parentType)) ? parentType.getFields()[node.name.value] : undefined;
    const returnsList = def !== undefined && isListType(isNonNullType(def.type) ? def.type.ofType : def.type);
    const page = def?.args.some((a) => a.name === 'first') ? this.firstOf(node) : undefined;
    const items = returnsList ? (page ?? pageSize ?? this.limits.defaultListSize) : 1;
    const inner = this.selections(node.selectionSet, def ? getNamedType(def.type) : undefined, returnsList ? undefined : page);
    return { depth: 1 + inner.depth, aliases: aliases + inner.aliases, cost: 1 + items * inner.cost };
  }

  private firstOf(node: FieldNode): number {
    const value = node.arguments?.find((a) => a.name.value === 'first')?.value;
    if (!value || value.kind === Kind.NULL) return this.limits.defaultListSize;
    if (value.kind === Kind.INT) return Math.min(Math.max(Number(value.value), 0), this.limits.maxListSize);
    return this.limits.maxListSize; // a variable: its value is not known yet
  }
}

/** Exact up to 2^53, then an honest lower bound. */
function count(n: number): string {
  return Number.isSafeInteger(n) ? String(n) : `more than ${Number.MAX_SAFE_INTEGER}`;
}

const INTROSPECTION_FRAGMENTS = ['FullType', 'InputValue', 'TypeRef'];
const canonicalIntrospection = new Map<string, string>();

/**
 * Whether the document is exactly what `getIntrospectionQuery(options)` of the graphql
 * package produces, for some options. The options are read off the document, the query is
 * generated with them and both are compared in printed (canonical) form.
 */
export function isStandardIntrospectionQuery(document: DocumentNode): boolean {
  const defs = document.definitions;
  if (defs.length !== 4) return false;
  const [operation, ...fragments] = defs;
  if (operation?.kind !== Kind.OPERATION_DEFINITION || operation.name?.value !== 'IntrospectionQuery') return false;
  if (fragments.some((f, i) => f.kind !== Kind.FRAGMENT_DEFINITION || f.name.value !== INTROSPECTION_FRAGMENTS[i])) return false;
  if ((document.loc?.end ?? 0) > 64 * 1024) return false;
  const printed = print(document);
  const typeDepth = printed.split('ofType').length - 1;
  if (typeDepth > 100) return false;
  const options: IntrospectionOptions = {
    descriptions: /\bdescription\b/.test(printed),
    specifiedByUrl: printed.includes('specifiedByURL'),
    directiveIsRepeatable: printed.includes('isRepeatable'),
    inputValueDeprecation: printed.includes('args(includeDeprecated: true)'),
    experimentalDirectiveDeprecation: printed.includes('directives(includeDeprecated: true)'),
    oneOf: printed.includes('isOneOf'),
    typeDepth,
  };
  return [false, true].some((schemaDescription) => canonical({ ...options, schemaDescription }) === printed);
}

function canonical(options: IntrospectionOptions): string {
  const key = JSON.stringify(options);
  let text = canonicalIntrospection.get(key);
  if (text === undefined) {
    text = print(parse(getIntrospectionQuery(options)));
    // A handful of option sets are in use; keep the cache small whatever clients send.
    if (canonicalIntrospection.size >= 32) canonicalIntrospection.delete(canonicalIntrospection.keys().next().value as string);
    canonicalIntrospection.set(key, text);
  }
  return text;
}
