import { constants, createPublicKey, publicEncrypt } from 'node:crypto';
import { parseEncryptionKey } from '../../src/crypto/encryption-key';

/**
 * What deployed legacy clients (the official Java and Android SDKs, the shop plugins) do: the whole
 * plaintext as ONE PKCS#1 v1.5 block under the encryption key, no slicing. Throws when the
 * plaintext does not fit one block of the key (k - 11 bytes), as those clients fail.
 */
export function encryptOneBlock(plaintext: string | object, encryptionKey: string): string {
  const text = typeof plaintext === 'string' ? plaintext : JSON.stringify(plaintext);
  const { modulus, exponent } = parseEncryptionKey(encryptionKey);
  const publicKey = createPublicKey({ key: { kty: 'RSA', n: modulus.toString('base64url'), e: exponent.toString('base64url') }, format: 'jwk' });
  return publicEncrypt({ key: publicKey, padding: constants.RSA_PKCS1_PADDING }, Buffer.from(text, 'utf8')).toString('base64');
}
