import { constants, createHmac, hkdfSync, privateDecrypt, type KeyObject } from 'node:crypto';
import { syntheticBytesNeeded, unpadPkcs1v15 } from './pkcs1';

export const PAYLOAD_DECRYPTION_FAILED = 'Unable to decrypt the payload, please encrypt it with your encryption key and try again';

/** One error, one message, for every kind of failure: no padding oracle. */
export class PayloadDecryptionError extends Error {
  constructor() {
    super(PAYLOAD_DECRYPTION_FAILED);
    this.name = 'PayloadDecryptionError';
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const REJECTION_LABEL = 'pgw/payload/implicit-rejection/v1';
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** At most this many RSA blocks per payload (about 7.6 KiB of plaintext with 2048-bit keys, 15.7 KiB with 4096). */
export const MAX_BLOCKS = 32;

/** What a decryptor needs, in a form that can be posted to a worker thread (KeyObjects clone cheaply). */
export interface DecryptionKeyMaterial {
  privateKey: KeyObject;
  /** Per-key secret for synthetic messages (see PayloadDecryptor). */
  rejectionKey: Uint8Array;
}

/**
 * Decrypts the `data` of Encrypted endpoints: base64 of one or more k-byte RSA blocks, each
 * the PKCS#1 v1.5 encryption of a byte slice of the UTF-8 JSON plaintext.
 *
 * Node 20 refuses RSA_PKCS1_PADDING in privateDecrypt (Marvin, CVE-2023-46809), so blocks are
 * decrypted raw (RSA_NO_PADDING) and unpadded in constant time with implicit rejection: bad
 * padding yields a deterministic pseudo-random message and fails at the UTF-8/JSON step,
 * exactly like a payload encrypted under another key.
 */
export class PayloadDecryptor {
  readonly modulusBytes: number;
  /** Modulus size in bits. */
  readonly bits: number;
  private readonly privateKey: KeyObject;
  /** Per-key secret for synthetic messages; unknown to an attacker, stable for a key. */
  private readonly rejectionKey: Buffer;

  /** The longest base64 of MAX_BLOCKS blocks: anything longer is refused before it is even decoded. */
  private readonly maxDataLength: number;

  constructor(privateKey: KeyObject, rejectionKey?: Uint8Array) {
    if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'rsa') {
      throw new Error('PayloadDecryptor needs an RSA private key');
    }
    const bits = privateKey.asymmetricKeyDetails?.modulusLength;
    if (!bits) throw new Error('PayloadDecryptor: unknown modulus length');
    this.privateKey = privateKey;
    this.bits = bits;
    this.modulusBytes = Math.ceil(bits / 8);
    this.maxDataLength = Math.ceil((this.modulusBytes * MAX_BLOCKS) / 3) * 4;
    let secret = rejectionKey;
    if (!secret) {
      const der = privateKey.export({ type: 'pkcs8', format: 'der' });
      secret = createHmac('sha256', REJECTION_LABEL).update(der).digest();
      der.fill(0);
    }
    // A buffer of its own, exactly this size: posting a view of Node's shared buffer pool to a
    // worker would copy the whole pool along.
    const own = new Uint8Array(secret.byteLength);
    own.set(secret);
    this.rejectionKey = Buffer.from(own.buffer);
  }

  /** The same decryptor elsewhere (a worker thread): `new PayloadDecryptor(m.privateKey, m.rejectionKey)`. */
  get material(): DecryptionKeyMaterial {
    return { privateKey: this.privateKey, rejectionKey: this.rejectionKey };
  }

  /**
   * How many RSA blocks `data` holds, from its length alone (public): exact for well-formed
   * base64; malformed data is refused by decryptBytes before any RSA work anyway.
   */
  blockCount(dataBase64: string): number {
    if (typeof dataBase64 !== 'string') return 0;
    const padding = dataBase64.endsWith('==') ? 2 : dataBase64.endsWith('=') ? 1 : 0;
    return Math.max(0, Math.ceil((Math.floor(dataBase64.length / 4) * 3 - padding) / this.modulusBytes));
  }

  decrypt(dataBase64: string): Record<string, unknown> {
    return parsePlaintext(this.decryptBytes(dataBase64));
  }

  /**
   * The RSA part: the plaintext bytes, or a pseudo-random stand-in when a block's padding is
   * bad (parsePlaintext then fails on it). Throws PayloadDecryptionError only on properties
   * of the ciphertext that are public anyway (format, length, a block ≥ the modulus).
   */
  decryptBytes(dataBase64: string): Buffer {
    const k = this.modulusBytes;
    // Checks on the public ciphertext may exit early: they reveal nothing about the key.
    if (typeof dataBase64 !== 'string' || dataBase64.length === 0 || dataBase64.length > this.maxDataLength) throw new PayloadDecryptionError();
    if (!BASE64.test(dataBase64)) throw new PayloadDecryptionError();
    const data = Buffer.from(dataBase64, 'base64');
    if (data.length === 0 || data.length % k !== 0 || data.toString('base64') !== dataBase64) throw new PayloadDecryptionError();
    // Bounded work per request: every plaintext of the interface fits in a few blocks.
    if (data.length / k > MAX_BLOCKS) throw new PayloadDecryptionError();

    const parts: Buffer[] = [];
    try {
      for (let offset = 0; offset < data.length; offset += k) {
        const block = data.subarray(offset, offset + k);
        let em: Buffer;
        try {
          em = privateDecrypt({ key: this.privateKey, padding: constants.RSA_NO_PADDING }, block);
        } catch {
          throw new PayloadDecryptionError(); // block ≥ modulus: a public property of the ciphertext
        }
        // Always computed, so valid and invalid padding cost the same.
        const synthetic = this.syntheticMessage(block);
        parts.push(unpadPkcs1v15(em, synthetic));
        em.fill(0);
      }
      return Buffer.concat(parts);
    } finally {
      for (const part of parts) part.fill(0);
    }
  }

  /** HKDF-SHA256: extract = HMAC(per-key secret, ciphertext block), then expand to the size needed. */
  private syntheticMessage(block: Buffer): Buffer {
    return Buffer.from(hkdfSync('sha256', block, this.rejectionKey, REJECTION_LABEL, syntheticBytesNeeded(this.modulusBytes)));
  }
}

/**
 * The last step of every decryption, inline or after a worker thread: strict UTF-8, then a JSON
 * object. Wipes the bytes; any failure is the one PayloadDecryptionError.
 */
export function parsePlaintext(plaintext: Uint8Array): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(utf8.decode(plaintext));
  } catch {
    throw new PayloadDecryptionError();
  } finally {
    plaintext.fill(0);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new PayloadDecryptionError();
  return parsed as Record<string, unknown>;
}
