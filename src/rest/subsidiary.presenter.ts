import { subsidiaryView } from '../merchants/subsidiary.view';
import type { Subsidiary } from '../merchants/subsidiary.entity';

/**
 * The Subsidiary object of REST answers. `customization` was "null or array" in the
 * legacy interface: always an array here, since strict client decoders fail on null.
 */
export function subsidiaryRecord(s: Subsidiary) {
  return { ...subsidiaryView(s), customization: s.customization ?? [] };
}
