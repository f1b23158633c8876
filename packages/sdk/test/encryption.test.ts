import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import forge from 'node-forge';
import { blocksFor, encryptPayload, EncryptionKeyError, parseEncryptionKey } from '../src';

/** An encryption key as the service issues it: base64 of "<bits>!<RSAKeyValue>…". */
function encryptionKeyOf(publicKey: KeyObject, bits: number): string {
  const jwk = publicKey.export({ format: 'jwk' }) as { n: string; e: string };
  const b64 = (s: string) => Buffer.from(s, 'base64url').toString('base64');
  const xml = `<RSAKeyValue><Modulus>${b64(jwk.n)}</Modulus><Exponent>${b64(jwk.e)}</Exponent></RSAKeyValue>`;
  return Buffer.from(`${bits}!${xml}`, 'utf8').toString('base64');
}

/** Decrypts block by block with node-forge and joins the bytes, as the service does. */
function decrypt(data: string, privateKey: KeyObject, bits: number): string {
  const key = forge.pki.privateKeyFromPem(privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  const raw = Buffer.from(data, 'base64');
  const k = bits / 8;
  expect(raw.length % k).toBe(0);
  const parts: Buffer[] = [];
  for (let offset = 0; offset < raw.length; offset += k) {
    parts.push(Buffer.from(key.decrypt(raw.subarray(offset, offset + k).toString('binary'), 'RSAES-PKCS1-V1_5'), 'binary'));
  }
  return Buffer.concat(parts).toString('utf8');
}

/** `{"p":"xx…"}` of exactly n UTF-8 bytes. */
const jsonOfBytes = (n: number) => `{"p":"${'x'.repeat(n - 8)}"}`;

describe.each([2048, 3072, 4096])('SDK encryptPayload with a %i-bit key', (bits) => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: bits });
  const encryptionKey = encryptionKeyOf(publicKey, bits);
  const k = bits / 8;

  it('reads the key size and the one-block limit (k - 11 bytes)', () => {
    const parsed = parseEncryptionKey(encryptionKey);
    expect(parsed).toMatchObject({ bits, blockBytes: k, maxSingleBlockBytes: k - 11 });
    if (bits === 4096) expect(parsed.maxSingleBlockBytes).toBe(501);
  });

  it('encrypts a plaintext that fits as exactly one block, and one byte more as two', () => {
    const fits = jsonOfBytes(k - 11);
    const single = encryptPayload(fits, encryptionKey);
    expect(Buffer.from(single, 'base64')).toHaveLength(k);
    expect(decrypt(single, privateKey, bits)).toBe(fits);
    expect(blocksFor(fits, encryptionKey)).toBe(1);

    const over = jsonOfBytes(k - 10);
    const double = encryptPayload(over, encryptionKey);
    expect(Buffer.from(double, 'base64')).toHaveLength(2 * k);
    expect(decrypt(double, privateKey, bits)).toBe(over);
    expect(blocksFor(over, encryptionKey)).toBe(2);
  });

  it('round-trips objects and multibyte text cut across blocks', () => {
    const plaintext = { reference: 'ORD-1', note: 'naïve café ✓ '.repeat(Math.ceil((3 * k) / 15)) };
    const data = encryptPayload(plaintext, encryptionKey);
    expect(JSON.parse(decrypt(data, privateKey, bits))).toEqual(plaintext);
  });
});

describe('SDK encryption refuses what it cannot encrypt', () => {
  it('bad keys and empty plaintexts throw EncryptionKeyError before anything is sent', () => {
    expect(() => parseEncryptionKey('not base64!')).toThrow(EncryptionKeyError);
    expect(() => parseEncryptionKey(Buffer.from('2048<RSAKeyValue/>').toString('base64'))).toThrow(/must have the form/);
    expect(() => parseEncryptionKey(Buffer.from('2047!<RSAKeyValue/>').toString('base64'))).toThrow(/multiple of 8/);
    const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 1024 });
    expect(() => parseEncryptionKey(encryptionKeyOf(publicKey, 2048))).toThrow(/does not have 2048 bits/);
    expect(() => encryptPayload('', encryptionKeyOf(publicKey, 1024))).toThrow(/must not be empty/);
  });
});
