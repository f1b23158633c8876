import { GraphQLError, Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';

/**
 * Query depth and size limits, checked before execution, so that one request cannot make
 * the server walk an unbounded tree.
 */
export function depthAndSizeLimit(maxDepth: number, maxFields: number) {
  return (context: ValidationContext): ASTVisitor => {
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const def of context.getDocument().definitions) if (def.kind === Kind.FRAGMENT_DEFINITION) fragments.set(def.name.value, def);

    const measure = (set: SelectionSetNode, depth: number, seen: Set<string>): { depth: number; fields: number } => {
      let deepest = depth;
      let fields = 0;
      for (const sel of set.selections) {
        if (sel.kind === Kind.FIELD) {
          fields += 1;
          if (sel.selectionSet) {
            const inner = measure(sel.selectionSet, depth + 1, seen);
            deepest = Math.max(deepest, inner.depth);
            fields += inner.fields;
          }
        } else if (sel.kind === Kind.INLINE_FRAGMENT) {
          const inner = measure(sel.selectionSet, depth, seen);
          deepest = Math.max(deepest, inner.depth);
          fields += inner.fields;
        } else {
          const fragment = fragments.get(sel.name.value);
          if (!fragment || seen.has(sel.name.value)) continue;
          const inner = measure(fragment.selectionSet, depth, new Set([...seen, sel.name.value]));
          deepest = Math.max(deepest, inner.depth);
          fields += inner.fields;
        }
      }
      return { depth: deepest, fields };
    };

    return {
      OperationDefinition(node) {
        const { depth, fields } = measure(node.selectionSet, 1, new Set());
        if (depth > maxDepth) context.reportError(new GraphQLError(`The query is ${depth} levels deep; the limit is ${maxDepth}.`, { nodes: [node], extensions: { code: 'QUERY_TOO_COMPLEX' } }));
        if (fields > maxFields) context.reportError(new GraphQLError(`The query selects ${fields} fields; the limit is ${maxFields}.`, { nodes: [node], extensions: { code: 'QUERY_TOO_COMPLEX' } }));
      },
    };
  };
}
