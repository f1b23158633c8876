import fs from 'node:fs';
import path from 'node:path';

/**
 * A folder of src/ imports from its own folder and from lower layers only. These are the edges
 * that once ran upwards: the webhook endpoint and its URL policy are merchant settings, the
 * tenant-aware payload service and the master-key rotation are merchant data (crypto/ holds
 * primitives only), and the REST and GraphQL failure shapes belong to protection/, which rest/
 * builds on.
 */
const SRC = path.join(__dirname, '..', '..', 'src');

/** The src/ folders that the `.ts` files of `folder` import from (value imports and type imports alike). */
function importedFolders(folder: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const dir = path.join(SRC, folder);
  for (const file of fs.readdirSync(dir, { recursive: true }) as string[]) {
    if (!file.endsWith('.ts')) continue;
    const source = fs.readFileSync(path.join(dir, file), 'utf8');
    for (const m of source.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+'(\.[^']+)'/gm)) {
      const target = path.relative(SRC, path.resolve(path.dirname(path.join(dir, file)), m[1]!));
      const top = target.split(path.sep)[0]!;
      if (top === folder || !target.includes(path.sep)) continue;
      found.set(top, [...(found.get(top) ?? []), `${folder}/${file} -> ${target}`]);
    }
  }
  return found;
}

describe('folder layering of src/', () => {
  it.each([
    ['merchants', 'events'],
    ['crypto', 'merchants'],
    ['protection', 'rest'],
  ])('%s/ imports nothing from %s/ (a higher layer)', (lower, higher) => {
    expect(importedFolders(lower).get(higher) ?? []).toEqual([]);
  });
});
