import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const MASTER_KEY_HELP = 'MASTER_KEY must be 64 hex characters or the base64 of exactly 32 bytes';

/** MASTER_KEY: 64 hex characters, or base64 (standard or URL-safe, padding optional) of exactly 32 bytes. */
export function parseMasterKey(value: string): Buffer {
  // Messages never echo the value: it is a secret.
  if (typeof value !== 'string') throw new Error(MASTER_KEY_HELP);
  const v = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(v)) return Buffer.from(v, 'hex');
  const standard = /^[A-Za-z0-9+/]{43}=?$/.test(v);
  const urlSafe = /^[A-Za-z0-9_-]{43}$/.test(v);
  if (standard || urlSafe) {
    const key = Buffer.from(v, standard ? 'base64' : 'base64url');
    // Canonical only: the unused low bits of the last character must be zero.
    if (key.length === 32 && key.toString(standard ? 'base64' : 'base64url').replace(/=$/, '') === v.replace(/=$/, '')) return key;
  }
  throw new Error(`${MASTER_KEY_HELP} (got ${v.length} characters of something else)`);
}

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Thrown by open() for every failure alike (format, tampering, wrong context or key). */
const OPEN_FAILED = 'sealed secret could not be opened: malformed, tampered with, or sealed under another key or context';

/**
 * Secrets at rest (RSA private keys, webhook secrets) sealed with AES-256-GCM under the
 * master key: `v1.<iv>.<tag>.<ciphertext>` (base64url), random 96-bit IV. The context
 * (e.g. `encryption-key:42`) is the associated data, so a sealed value copied to another
 * row does not open.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    if (!Buffer.isBuffer(masterKey) || masterKey.length !== 32) throw new Error('SecretBox: the master key must be 32 bytes');
    this.key = Buffer.from(masterKey); // own copy: later changes to the caller's buffer don't matter
  }

  seal(plaintext: string, context: string): string {
    if (typeof plaintext !== 'string' || typeof context !== 'string') throw new TypeError('SecretBox.seal: plaintext and context must be strings');
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
  }

  open(sealed: string, context: string): string {
    if (typeof sealed !== 'string' || typeof context !== 'string') throw new Error(OPEN_FAILED);
    const parts = sealed.split('.');
    if (parts.length !== 4 || parts[0] !== VERSION) throw new Error(OPEN_FAILED);
    const iv = decodeBase64Url(parts[1]!);
    const tag = decodeBase64Url(parts[2]!);
    const ciphertext = decodeBase64Url(parts[3]!);
    if (!iv || iv.length !== IV_BYTES || !tag || tag.length !== TAG_BYTES || !ciphertext) throw new Error(OPEN_FAILED);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(tag);
      const plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
      return utf8.decode(plaintext);
    } catch {
      throw new Error(OPEN_FAILED);
    }
  }
}

/** Canonical base64url without padding (Buffer.from would skip stray characters). */
function decodeBase64Url(text: string): Buffer | undefined {
  if (!BASE64URL.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : undefined;
}
