/**
 * Runs `step` for each item in turn and counts the items it changed. A step that throws is
 * handed to `onFault` and the next item goes on: in a background sweep, one item that cannot be
 * handled now (its processor call failing or timing out) never holds up the others. It is tried
 * again at the next run.
 */
export async function eachApart<T>(items: readonly T[], step: (item: T) => Promise<boolean>, onFault: (err: unknown, item: T) => void): Promise<number> {
  let changed = 0;
  for (const item of items) {
    try {
      if (await step(item)) changed += 1;
    } catch (err) {
      onFault(err, item);
    }
  }
  return changed;
}
