import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * Every field name selected anywhere below the resolved field (fragments included): lets a
 * list resolver skip work no client asked for (a count, payments and cards).
 */
export function selectedFieldNames(info: GraphQLResolveInfo): Set<string> {
  const names = new Set<string>();
  const seenFragments = new Set<string>();
  const visit = (set: SelectionSetNode | undefined) => {
    if (!set) return;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) {
        names.add(s.name.value);
        visit(s.selectionSet);
      } else if (s.kind === Kind.INLINE_FRAGMENT) {
        visit(s.selectionSet);
      } else if (s.kind === Kind.FRAGMENT_SPREAD && !seenFragments.has(s.name.value)) {
        seenFragments.add(s.name.value);
        visit(info.fragments[s.name.value]?.selectionSet);
      }
    }
  };
  for (const node of info.fieldNodes as readonly FieldNode[]) visit(node.selectionSet);
  return names;
}
