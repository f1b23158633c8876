import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Config } from '../config';

export const ADMIN_TOKEN_FILE = 'admin.token';

export interface AdminTokenSource {
  token?: string;
  /** The file in DATA_DIR the token was read from or written to; unset when ADMIN_TOKEN is given (or none is used). */
  file?: string;
  /** True only on the start that generated it: the one time it is printed. */
  generated: boolean;
}

/**
 * The platform-admin token. ADMIN_TOKEN wins. Otherwise, on the embedded database (or with
 * DEMO_MERCHANT=true), a token is generated once into DATA_DIR (mode 0600) and reused by later
 * starts and by the CLI, so a first run on a bare machine can create merchants at all.
 */
export function resolveAdminToken(config: Config): AdminTokenSource {
  if (config.adminToken) return { token: config.adminToken, generated: false };
  if (config.databaseUrl && config.demoMerchant !== true) return { generated: false };
  const file = path.join(config.dataDir, ADMIN_TOKEN_FILE);
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  let generated = false;
  try {
    fs.writeFileSync(file, `${randomBytes(24).toString('base64url')}\n`, { flag: 'wx', mode: 0o600 });
    generated = true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return { token: readAdminToken(config.dataDir), file, generated };
}

/** The token stored in DATA_DIR, if any (the CLI uses it to reach a running server). */
export function readAdminToken(dataDir: string): string | undefined {
  try {
    const token = fs.readFileSync(path.join(dataDir, ADMIN_TOKEN_FILE), 'utf8').trim();
    return token.length >= 16 ? token : undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Constant-time comparison of a presented admin token with ADMIN_TOKEN (never a match when either is unset). */
export function adminTokenMatches(expected: string | undefined, given: string | undefined): boolean {
  if (!expected || !given) return false;
  return timingSafeEqual(createHash('sha256').update(expected).digest(), createHash('sha256').update(given).digest());
}
