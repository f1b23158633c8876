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

/**
 * Decrypts the `data` of Encrypted endpoints: base64 of one or more k-byte RSA blocks, each
 * the PKCS#1 v1.5 encryption of a byte slice of the UTF-8 JSON plaintext.
 *
 * Node 20 refuses RSA_PKCS1_PADDING in privateDecrypt (Marvin, CVE-2023-46809), so blocks are
 * decrypted raw (RSA_NO_PADDING) and unpadded in constant time with implicit rejection: bad
 * padding yields a deterministic pseudo-random message and fails at the UTF-8/JSON step,
 * exactly like a payload encrypted under another key.
 */
/** At most this many RSA blocks per payload (about 7.6 KiB of plaintext with 2048-bit keys). */
export const MAX_BLOCKS = 32;

export class PayloadDecryptor {
  readonly modulusBytes: number;
  /** Per-key secret for synthetic messages; unknown to an attacker, stable for a key. */
  private readonly rejectionKey: Buffer;

  constructor(private readonly privateKey: KeyObject) {
    if (privateKey.type !== 'private' || privateKey.asymmetricKeyType !== 'rsa') {
      throw new Error('PayloadDecryptor needs an RSA private key');
    }
    const bits = privateKey.asymmetricKeyDetails?.modulusLength;
    if (!bits) throw new Error('PayloadDecryptor: unknown modulus length');
    this.modulusBytes = Math.ceil(bits / 8);
    const der = privateKey.export({ type: 'pkcs8', format: 'der' });
    this.rejectionKey = createHmac('sha256', REJECTION_LABEL).update(der).digest();
    der.fill(0);
  }

  decrypt(dataBase64: string): Record<string, unknown> {
    const k = this.modulusBytes;
    // Checks on the public ciphertext may exit early: they reveal nothing about the key.
    if (typeof dataBase64 !== 'string' || dataBase64.length === 0 || !BASE64.test(dataBase64)) throw new PayloadDecryptionError();
    const data = Buffer.from(dataBase64, 'base64');
    if (data.length === 0 || data.length % k !== 0 || data.toString('base64') !== dataBase64) throw new PayloadDecryptionError();
    // Bounded work per request: every plaintext of the interface fits in a few blocks.
    if (data.length / k > MAX_BLOCKS) throw new PayloadDecryptionError();

    const parts: Buffer[] = [];
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

    const plaintext = Buffer.concat(parts);
    let parsed: unknown;
    try {
      parsed = JSON.parse(utf8.decode(plaintext));
    } catch {
      throw new PayloadDecryptionError();
    } finally {
      plaintext.fill(0);
      for (const part of parts) part.fill(0);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new PayloadDecryptionError();
    return parsed as Record<string, unknown>;
  }

  /** HKDF-SHA256: extract = HMAC(per-key secret, ciphertext block), then expand to the size needed. */
  private syntheticMessage(block: Buffer): Buffer {
    return Buffer.from(hkdfSync('sha256', block, this.rejectionKey, REJECTION_LABEL, syntheticBytesNeeded(this.modulusBytes)));
  }
}
