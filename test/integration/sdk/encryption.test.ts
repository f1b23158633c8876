import { createPrivateKey } from 'node:crypto';
import { generateRsaKeyMaterial } from '../../../src/crypto/encryption-key';
import { PayloadDecryptor } from '../../../src/crypto/payload-decryptor';
import { encryptPayload as legacyClientEncrypt } from '../../support/payload-client';
import { blocksFor, encryptPayload, parseEncryptionKey } from '../../../packages/sdk/src';

/** The SDK's payloads are the format the service decrypts, for every key size it issues. */
describe.each([2048, 3072, 4096])('SDK payloads under a %i-bit key the service issued', (bits) => {
  let decryptor: PayloadDecryptor;
  let encryptionKey: string;
  beforeAll(async () => {
    const material = await generateRsaKeyMaterial(bits);
    encryptionKey = material.encryptionKey;
    decryptor = new PayloadDecryptor(createPrivateKey(material.privateKeyPem));
  }, 30_000);

  it('decrypts one-block and multi-block payloads, in the same block layout as the bundled client', () => {
    const limit = parseEncryptionKey(encryptionKey).maxSingleBlockBytes;
    expect(limit).toBe(bits / 8 - 11);
    for (const size of [20, limit, limit + 1, 3 * limit + 7]) {
      const plaintext = { reference: 'ORD-1', note: 'é'.repeat(Math.max(0, Math.floor((size - 30) / 2))) };
      const data = encryptPayload(plaintext, encryptionKey);
      expect(Buffer.from(data, 'base64').length).toBe(blocksFor(plaintext, encryptionKey) * (bits / 8));
      expect(decryptor.decrypt(data)).toEqual(plaintext);
      // Same block count as the service's own reference client (the bytes differ: padding is random).
      expect(Buffer.from(legacyClientEncrypt(plaintext, encryptionKey), 'base64').length).toBe(Buffer.from(data, 'base64').length);
    }
  });
});
