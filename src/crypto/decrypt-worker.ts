import { move } from 'piscina';
import { PayloadDecryptionError, PayloadDecryptor, type DecryptionKeyMaterial } from './payload-decryptor';

/** One payload for a worker thread of the decryption pool. */
export interface DecryptTask {
  key: DecryptionKeyMaterial;
  data: string;
}

/**
 * Runs in a worker thread: the RSA part of PayloadDecryptor (the same constant-time unpadding)
 * on one payload. Returns the plaintext bytes, moved to the caller and not kept here, or null
 * for a ciphertext refused on its public form; the caller parses the bytes exactly as when it
 * decrypts inline, so every failure still ends in the one PayloadDecryptionError.
 */
export default function decryptInWorker(task: DecryptTask): Uint8Array | null {
  let bytes: Buffer;
  try {
    bytes = new PayloadDecryptor(task.key.privateKey, task.key.rejectionKey).decryptBytes(task.data);
  } catch (err) {
    if (err instanceof PayloadDecryptionError) return null;
    throw err;
  }
  // An exact copy to move: `bytes` may be a view of Node's shared buffer pool.
  const out = new Uint8Array(bytes.length);
  out.set(bytes);
  bytes.fill(0);
  return move(out) as Uint8Array;
}
