/**
 * True when objects or arrays in `value` nest more than `levels` deep. Never descends further
 * than `levels`, so it is safe on input nested far deeper than any stack allows.
 */
export function nestedDeeperThan(value: unknown, levels: number): boolean {
  if (value === null || typeof value !== 'object') return false;
  if (levels === 0) return true;
  for (const v of Object.values(value)) if (nestedDeeperThan(v, levels - 1)) return true;
  return false;
}
