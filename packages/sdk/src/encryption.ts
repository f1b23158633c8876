import forge from 'node-forge';

/**
 * Payload encryption for the Encrypted endpoints, with node-forge only (no Node built-ins),
 * so it runs in Node and in browsers alike.
 *
 * The encryption key is base64 of `"<bits>!<RSAKeyValue><Modulus>…</Modulus><Exponent>…</Exponent></RSAKeyValue>"`.
 * The UTF-8 plaintext is encrypted with RSA PKCS#1 v1.5; a plaintext longer than k - 11 bytes
 * (k = modulus length in bytes) is cut into slices of at most k - 11 bytes, each encrypted on
 * its own, and the k-byte blocks are concatenated in order before base64 encoding.
 */

export const MIN_KEY_BITS = 384;
export const MAX_KEY_BITS = 32768;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const XML = /^<RSAKeyValue><Modulus>([A-Za-z0-9+/=]+)<\/Modulus><Exponent>([A-Za-z0-9+/=]+)<\/Exponent><\/RSAKeyValue>$/;

export interface ParsedEncryptionKey {
  /** The RSA key size the key announces (2048, 3072, 4096, …). */
  bits: number;
  /** Bytes of one ciphertext block (k). */
  blockBytes: number;
  /** The longest plaintext that fits one block: k - 11 bytes (501 for a 4096-bit key). */
  maxSingleBlockBytes: number;
  publicKey: forge.pki.rsa.PublicKey;
}

/** Thrown for an unusable encryption key or plaintext, before anything is sent. */
export class EncryptionKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EncryptionKeyError';
  }
}

/** Decodes and checks an encryption key. */
export function parseEncryptionKey(encryptionKey: string): ParsedEncryptionKey {
  if (typeof encryptionKey !== 'string') throw new EncryptionKeyError('The encryption key must be a string.');
  const raw = decodeBase64(encryptionKey.trim());
  if (raw === undefined) throw new EncryptionKeyError('The encryption key is not valid base64.');
  let decoded: string;
  try {
    decoded = forge.util.decodeUtf8(raw);
  } catch {
    throw new EncryptionKeyError('The encryption key is not valid UTF-8.');
  }
  const parts = decoded.split('!');
  if (parts.length !== 2) throw new EncryptionKeyError('The encryption key must have the form "<bits>!<RSAKeyValue>…</RSAKeyValue>".');
  const [bitsText, xml] = parts as [string, string];
  if (!/^[0-9]{1,5}$/.test(bitsText)) throw new EncryptionKeyError('The key size of the encryption key is not an integer.');
  const bits = Number(bitsText);
  if (bits < MIN_KEY_BITS || bits > MAX_KEY_BITS || bits % 8 !== 0) {
    throw new EncryptionKeyError(`The key size must be a multiple of 8 from ${MIN_KEY_BITS} to ${MAX_KEY_BITS} bits (got ${bits}).`);
  }
  const match = XML.exec(xml);
  if (!match) throw new EncryptionKeyError('The encryption key does not contain a well-formed <RSAKeyValue> with <Modulus> and <Exponent>.');
  const modulus = decodeBase64(match[1]!);
  const exponent = decodeBase64(match[2]!);
  if (modulus === undefined || exponent === undefined) throw new EncryptionKeyError('The Modulus or Exponent of the encryption key is not valid base64.');
  const n = new forge.jsbn.BigInteger(forge.util.bytesToHex(modulus), 16);
  const e = new forge.jsbn.BigInteger(forge.util.bytesToHex(exponent), 16);
  if (n.bitLength() > bits || n.bitLength() <= bits - 8) throw new EncryptionKeyError(`The modulus of the encryption key does not have ${bits} bits.`);
  if (!n.testBit(0)) throw new EncryptionKeyError('The modulus of the encryption key is invalid.');
  if (!e.testBit(0) || e.bitLength() < 2 || e.bitLength() > 64) throw new EncryptionKeyError('The exponent of the encryption key is invalid.');
  const blockBytes = bits / 8;
  return { bits, blockBytes, maxSingleBlockBytes: blockBytes - 11, publicKey: forge.pki.setRsaPublicKey(n, e) };
}

/**
 * Encrypts a plaintext (an object is JSON-encoded) for an Encrypted endpoint and returns the
 * value of `data`. Works for any key size; one block when the plaintext fits, several otherwise.
 */
export function encryptPayload(plaintext: string | object, encryptionKey: string | ParsedEncryptionKey): string {
  const text = typeof plaintext === 'string' ? plaintext : plaintext !== null && typeof plaintext === 'object' ? JSON.stringify(plaintext) : undefined;
  if (typeof text !== 'string') throw new EncryptionKeyError('The plaintext must be a string or an object.');
  if (text.length === 0) throw new EncryptionKeyError('The plaintext must not be empty.');
  const key = typeof encryptionKey === 'string' ? parseEncryptionKey(encryptionKey) : encryptionKey;
  let bytes: string;
  try {
    bytes = forge.util.encodeUtf8(text);
  } catch {
    throw new EncryptionKeyError('The plaintext is not valid Unicode (lone surrogate).');
  }
  const slice = key.maxSingleBlockBytes;
  const blocks: string[] = [];
  // A multibyte character may be split between slices: the server joins the bytes before decoding.
  for (let offset = 0; offset < bytes.length; offset += slice) {
    blocks.push(key.publicKey.encrypt(bytes.substring(offset, offset + slice), 'RSAES-PKCS1-V1_5'));
  }
  return forge.util.encode64(blocks.join(''));
}

/** How many ciphertext blocks a plaintext takes under a key (1 for most payloads). */
export function blocksFor(plaintext: string | object, encryptionKey: string | ParsedEncryptionKey): number {
  const text = typeof plaintext === 'string' ? plaintext : JSON.stringify(plaintext);
  const key = typeof encryptionKey === 'string' ? parseEncryptionKey(encryptionKey) : encryptionKey;
  return Math.max(1, Math.ceil(forge.util.encodeUtf8(text).length / key.maxSingleBlockBytes));
}

/** Canonical standard base64 to a forge byte string; undefined when malformed. */
function decodeBase64(text: string): string | undefined {
  if (text.length === 0 || !BASE64.test(text)) return undefined;
  const bytes = forge.util.decode64(text);
  return forge.util.encode64(bytes) === text ? bytes : undefined;
}
