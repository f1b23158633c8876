import { createPublicKey, generateKeyPair, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';

const generateKeyPairAsync = promisify(generateKeyPair);

export const MIN_KEY_BITS = 384;
export const MAX_KEY_BITS = 32768;

/**
 * RSA sizes of the encryption keys the service issues. Legacy clients encrypt a whole order
 * plaintext as one PKCS#1 v1.5 block, at most k - 11 bytes: 245 bytes with 2048-bit keys, 373
 * with 3072, 501 with 4096, hence the default.
 */
export const ENCRYPTION_KEY_SIZES = [2048, 3072, 4096] as const;
export type EncryptionKeyBits = (typeof ENCRYPTION_KEY_SIZES)[number];
export const DEFAULT_ENCRYPTION_KEY_BITS: EncryptionKeyBits = 4096;

export function isEncryptionKeyBits(value: unknown): value is EncryptionKeyBits {
  return (ENCRYPTION_KEY_SIZES as readonly unknown[]).includes(value);
}

/** The most bytes one PKCS#1 v1.5 block of a `bits`-bit key holds (k - 11). */
export const oneBlockBytes = (bits: number): number => bits / 8 - 11;

/**
 * Why a key size smaller than the default breaks deployed clients, or null when it does not:
 * the official SDKs and plugins encrypt the whole plaintext as one block, and a typical order
 * plaintext (about 350 to 500 bytes) fits one block only of a 4096-bit key.
 */
export function smallKeyWarning(bits: number): string | null {
  if (!isEncryptionKeyBits(bits) || bits >= DEFAULT_ENCRYPTION_KEY_BITS) return null;
  return (
    `${bits}-bit encryption keys hold at most ${oneBlockBytes(bits)} bytes in one block. Real legacy clients ` +
    `(the official SDKs and shop plugins) encrypt the whole plaintext as one block and need ` +
    `${DEFAULT_ENCRYPTION_KEY_BITS}-bit keys (${oneBlockBytes(DEFAULT_ENCRYPTION_KEY_BITS)} bytes): ` +
    `their order requests will fail with this merchant. Use ${bits} only if every client splits its payloads into blocks.`
  );
}

export interface RsaKeyMaterial {
  bits: number;
  /** base64 of `"<bits>!<RSAKeyValue><Modulus>…</Modulus><Exponent>…</Exponent></RSAKeyValue>"` */
  encryptionKey: string;
  /** PKCS#8 PEM. */
  privateKeyPem: string;
}

/** A new RSA key pair (exponent 65537), generated off the event loop. */
export async function generateRsaKeyMaterial(bits: number = DEFAULT_ENCRYPTION_KEY_BITS): Promise<RsaKeyMaterial> {
  assertKeySize(bits);
  const { publicKey, privateKey } = await generateKeyPairAsync('rsa', { modulusLength: bits, publicExponent: 0x10001 });
  return {
    bits,
    encryptionKey: encryptionKeyFromPublicKey(publicKey),
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/** The merchant-facing encryption key of an RSA public key (a private key is accepted too). */
export function encryptionKeyFromPublicKey(publicKey: KeyObject): string {
  const key = publicKey.type === 'private' ? createPublicKey(publicKey) : publicKey;
  if (key.type !== 'public' || key.asymmetricKeyType !== 'rsa') throw new Error('encryption key: not an RSA public key');
  const jwk = key.export({ format: 'jwk' });
  if (!jwk.n || !jwk.e) throw new Error('encryption key: not an RSA public key');
  const modulus = stripLeadingZeros(Buffer.from(jwk.n, 'base64url'));
  const exponent = stripLeadingZeros(Buffer.from(jwk.e, 'base64url'));
  const bits = key.asymmetricKeyDetails?.modulusLength ?? modulus.length * 8;
  const xml = `<RSAKeyValue><Modulus>${modulus.toString('base64')}</Modulus>` + `<Exponent>${exponent.toString('base64')}</Exponent></RSAKeyValue>`;
  return Buffer.from(`${bits}!${xml}`, 'utf8').toString('base64');
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const XML = /^<RSAKeyValue><Modulus>([A-Za-z0-9+/=]+)<\/Modulus><Exponent>([A-Za-z0-9+/=]+)<\/Exponent><\/RSAKeyValue>$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Parses and validates an encryption key; modulus and exponent come back without leading zeros. */
export function parseEncryptionKey(encryptionKey: string): { bits: number; modulus: Buffer; exponent: Buffer } {
  if (typeof encryptionKey !== 'string') throw new Error('encryption key: must be a string');
  const raw = strictBase64(encryptionKey);
  if (!raw) throw new Error('encryption key: not valid base64');
  let decoded: string;
  try {
    decoded = utf8.decode(raw);
  } catch {
    throw new Error('encryption key: not valid UTF-8');
  }
  const parts = decoded.split('!');
  if (parts.length !== 2) throw new Error('encryption key: expected "<bits>!<RSAKeyValue>…"');
  const [bitsText, xml] = parts as [string, string];
  if (!/^[0-9]{1,5}$/.test(bitsText)) throw new Error('encryption key: the key size is not an integer');
  const bits = Number(bitsText);
  assertKeySize(bits);
  const match = XML.exec(xml);
  if (!match) throw new Error('encryption key: malformed RSAKeyValue XML');
  const modulusRaw = strictBase64(match[1]!);
  const exponentRaw = strictBase64(match[2]!);
  if (!modulusRaw || !exponentRaw) throw new Error('encryption key: Modulus or Exponent is not valid base64');
  const modulus = stripLeadingZeros(modulusRaw);
  const exponent = stripLeadingZeros(exponentRaw);
  if (modulus.length * 8 !== bits) throw new Error(`encryption key: the modulus does not have ${bits} bits`);
  if ((modulus[modulus.length - 1]! & 1) === 0) throw new Error('encryption key: the modulus is even');
  if (exponent.length === 0 || exponent.length > 8 || (exponent[exponent.length - 1]! & 1) === 0 || (exponent.length === 1 && exponent[0]! < 3)) {
    throw new Error('encryption key: invalid public exponent');
  }
  return { bits, modulus, exponent };
}

function assertKeySize(bits: number): void {
  if (!Number.isInteger(bits) || bits < MIN_KEY_BITS || bits > MAX_KEY_BITS || bits % 8 !== 0) {
    throw new Error(`encryption key: the key size must be a multiple of 8 from ${MIN_KEY_BITS} to ${MAX_KEY_BITS} bits`);
  }
}

/** Canonical standard base64 only (Buffer.from would skip stray characters). */
function strictBase64(text: string): Buffer | undefined {
  if (text.length === 0 || !BASE64.test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  return bytes.toString('base64') === text ? bytes : undefined;
}

function stripLeadingZeros(bytes: Buffer): Buffer {
  let i = 0;
  while (i < bytes.length - 1 && bytes[i] === 0) i++;
  return bytes.subarray(i);
}
