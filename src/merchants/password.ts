import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { DomainError } from '../shared/errors';

export const MIN_PASSWORD_LENGTH = 12;
/** Longer passwords are refused: scrypt's work should not be the caller's to choose. */
export const MAX_PASSWORD_LENGTH = 1024;

/** scrypt cost parameters for new hashes; each stored hash keeps its own, so they can be raised later. */
const PARAMS = { N: 1 << 15, r: 8, p: 1 } as const;
const KEY_LENGTH = 64;
const SALT_BYTES = 16;

function derive(password: string, salt: Buffer, params: { N: number; r: number; p: number }, keyLength: number): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 128 * params.N * params.r * 2 };
  return new Promise((resolve, reject) => scrypt(password.normalize('NFC'), salt, keyLength, options, (err, key) => (err ? reject(err) : resolve(key))));
}

/** Refuses a password shorter than MIN_PASSWORD_LENGTH characters (or absurdly long), as bad input. */
export function checkPasswordStrength(password: unknown): string {
  if (typeof password !== 'string' || [...password].length < MIN_PASSWORD_LENGTH) {
    throw new DomainError('bad_input', `The password must have at least ${MIN_PASSWORD_LENGTH} characters.`, 'VAL400');
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new DomainError('bad_input', `The password must have at most ${MAX_PASSWORD_LENGTH} characters.`, 'VAL400');
  }
  return password;
}

/** `scrypt$N$r$p$<salt base64>$<hash base64>`: a fresh random salt per password, parameters kept with it. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, PARAMS, KEY_LENGTH);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

/** True when `password` matches the stored hash; compared in constant time. A malformed hash matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, saltB64, hashB64] = stored.split('$');
  if (scheme !== 'scrypt' || !saltB64 || !hashB64) return false;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (![params.N, params.r, params.p].every((v) => Number.isSafeInteger(v) && v > 0)) return false;
  const expected = Buffer.from(hashB64, 'base64');
  const actual = await derive(password, Buffer.from(saltB64, 'base64'), params, expected.length);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
