import fs from 'node:fs';
import path from 'node:path';

/**
 * The `redis-server` (or `valkey-server`) program on PATH, or undefined. Shared by the bench
 * (bench-redis.ts) and the tests (test/support/redis-server.ts), which each start a Redis of
 * their own and skip what needs one where neither program is installed. It lives with the bench
 * because the bench is built (tsconfig.build.json, scripts/build-if-stale.js) and the tests are
 * not: the tests may import from here, the bench may not import from test/.
 */
export function redisServerProgram(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    for (const name of ['redis-server', 'valkey-server']) {
      const candidate = path.join(dir, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}
