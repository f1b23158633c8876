import fs from 'node:fs';
import path from 'node:path';

/** What the service says of itself: its name for people, and its release from package.json. */
export interface PackageInfo {
  /** The package's name (`checkout-gateway`). */
  name: string;
  /** The release, as package.json's `version` says it. */
  version: string;
}

/** The service's name as pages and documents show it. */
export const SERVICE_NAME = 'Checkout gateway';

let cached: PackageInfo | undefined;

/** package.json of this service: the nearest one above this file (in the sources, the build and the container image alike). */
export function packageInfo(): PackageInfo {
  if (cached) return cached;
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (typeof manifest.name !== 'string' || typeof manifest.version !== 'string') throw new Error(`${file} has no name or version`);
      return (cached = { name: manifest.name, version: manifest.version });
    }
    if (path.dirname(dir) === dir) throw new Error('cannot find the package.json of the service');
  }
}
