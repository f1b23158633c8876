import forge from 'node-forge';

/**
 * The merchant-side encryption of payloads. node-forge only (no Node built-ins, no Buffer),
 * so the same module runs in Node and in the browser with node-forge loaded.
 *
 *   const data = encryptPayload({ reference: 'ORD-1' }, ENCRYPTION_KEY);
 *   // POST { "data": data } to an Encrypted endpoint
 */

const MIN_BITS = 384;
const MAX_BITS = 32768;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const XML = /^<RSAKeyValue><Modulus>([A-Za-z0-9+/=]+)<\/Modulus><Exponent>([A-Za-z0-9+/=]+)<\/Exponent><\/RSAKeyValue>$/;

/** Decodes and validates an encryption key (`base64("<bits>!<RSAKeyValue>…")`). */
export function parseEncryptionKey(encryptionKey: string): { bits: number; publicKey: forge.pki.rsa.PublicKey } {
  if (typeof encryptionKey !== 'string') throw new Error('The encryption key must be a string.');
  const raw = decodeBase64(encryptionKey.trim());
  if (raw === undefined) throw new Error('The encryption key is not valid base64.');
  let decoded: string;
  try {
    decoded = forge.util.decodeUtf8(raw);
  } catch {
    throw new Error('The encryption key is not valid UTF-8.');
  }
  const parts = decoded.split('!');
  if (parts.length !== 2) throw new Error('The encryption key must have the form "<bits>!<RSAKeyValue>…</RSAKeyValue>".');
  const bitsText = parts[0]!;
  const xml = parts[1]!;
  if (!/^[0-9]{1,5}$/.test(bitsText)) throw new Error('The key size of the encryption key is not an integer.');
  const bits = Number(bitsText);
  if (bits < MIN_BITS || bits > MAX_BITS || bits % 8 !== 0) {
    throw new Error(`The key size must be a multiple of 8 from ${MIN_BITS} to ${MAX_BITS} bits (got ${bits}).`);
  }
  const match = XML.exec(xml);
  if (!match) throw new Error('The encryption key does not contain a well-formed <RSAKeyValue> with <Modulus> and <Exponent>.');
  const modulusBytes = decodeBase64(match[1]!);
  const exponentBytes = decodeBase64(match[2]!);
  if (modulusBytes === undefined || exponentBytes === undefined) throw new Error('The Modulus or Exponent of the encryption key is not valid base64.');
  const n = new forge.jsbn.BigInteger(forge.util.bytesToHex(modulusBytes), 16);
  const e = new forge.jsbn.BigInteger(forge.util.bytesToHex(exponentBytes), 16);
  // Same byte length as announced (bits is a multiple of 8).
  if (n.bitLength() > bits || n.bitLength() <= bits - 8) throw new Error(`The modulus of the encryption key does not have ${bits} bits.`);
  if (!n.testBit(0)) throw new Error('The modulus of the encryption key is invalid.');
  if (!e.testBit(0) || e.bitLength() < 2 || e.bitLength() > 64) throw new Error('The exponent of the encryption key is invalid.');
  return { bits, publicKey: forge.pki.setRsaPublicKey(n, e) };
}

/**
 * RSA PKCS#1 v1.5 encryption of the UTF-8 plaintext (objects are JSON.stringified). A
 * plaintext over k - 11 bytes is cut into byte slices of at most k - 11 (a multibyte
 * character may be split: the server joins the bytes before decoding), each encrypted on
 * its own; the k-byte blocks are concatenated, and the whole is base64-encoded.
 */
export function encryptPayload(plaintext: string | object, encryptionKey: string): string {
  const text = typeof plaintext === 'string' ? plaintext : plaintext !== null && typeof plaintext === 'object' ? JSON.stringify(plaintext) : undefined;
  if (typeof text !== 'string') throw new Error('The plaintext must be a string or an object.');
  if (text.length === 0) throw new Error('The plaintext must not be empty.');
  const { publicKey } = parseEncryptionKey(encryptionKey);
  let bytes: string;
  try {
    bytes = forge.util.encodeUtf8(text);
  } catch {
    throw new Error('The plaintext is not valid Unicode (lone surrogate).');
  }
  const k = Math.ceil(publicKey.n.bitLength() / 8);
  const sliceLength = k - 11;
  const blocks: string[] = [];
  for (let offset = 0; offset < bytes.length; offset += sliceLength) {
    blocks.push(publicKey.encrypt(bytes.substring(offset, offset + sliceLength), 'RSAES-PKCS1-V1_5'));
  }
  return forge.util.encode64(blocks.join(''));
}

/** Canonical standard base64 to a forge byte string; undefined when malformed (decode64 skips stray characters). */
function decodeBase64(text: string): string | undefined {
  if (text.length === 0 || !BASE64.test(text)) return undefined;
  const bytes = forge.util.decode64(text);
  return forge.util.encode64(bytes) === text ? bytes : undefined;
}
