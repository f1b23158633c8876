import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { encryptionKeyFromPublicKey, generateRsaKeyMaterial, parseEncryptionKey, type RsaKeyMaterial } from '../../../src/crypto/encryption-key';
import { parseEncryptionKey as clientParseEncryptionKey } from '../../support/payload-client';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');
const XML_FORMAT = /^<RSAKeyValue><Modulus>([A-Za-z0-9+/]+={0,2})<\/Modulus><Exponent>([A-Za-z0-9+/]+={0,2})<\/Exponent><\/RSAKeyValue>$/;

let key1024: RsaKeyMaterial;
let key2048: RsaKeyMaterial;

beforeAll(async () => {
  [key1024, key2048] = await Promise.all([generateRsaKeyMaterial(1024), generateRsaKeyMaterial(2048)]);
});

/** Swaps the `<bits>` of an encryption key, keeping its XML. */
function withBits(encryptionKey: string, bits: string): string {
  const [, xml] = Buffer.from(encryptionKey, 'base64').toString('utf8').split('!');
  return b64(`${bits}!${xml}`);
}

describe('encryption key format', () => {
  it.each([
    ['2048', () => key2048, 2048],
    ['1024', () => key1024, 1024],
  ] as const)('is base64 of "<bits>!<RSAKeyValue>…" for %s', (_name, material, bits) => {
    const { encryptionKey, privateKeyPem } = material();
    expect(encryptionKey).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    const decoded = Buffer.from(encryptionKey, 'base64').toString('utf8');
    const parts = decoded.split('!');
    expect(parts).toHaveLength(2);
    expect(parts[0]).toBe(String(bits));
    const match = XML_FORMAT.exec(parts[1]!);
    expect(match).not.toBeNull();
    const [, modulus, exponent] = match!;
    expect(exponent).toBe('AQAB'); // 65537
    const n = Buffer.from(modulus!, 'base64');
    expect(n.toString('base64')).toBe(modulus); // standard base64 with padding
    expect(n.length).toBe(bits / 8);
    expect(n[0]).not.toBe(0); // no leading zero byte
    expect(n[0]! & 0x80).toBe(0x80);
    // Modulus is the private key's own.
    const jwk = createPrivateKey(privateKeyPem).export({ format: 'jwk' });
    expect(n.equals(Buffer.from(jwk.n!, 'base64url'))).toBe(true);
    expect(material().bits).toBe(bits);
  });

  it('exports the private key as PKCS#8 PEM', () => {
    expect(key1024.privateKeyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n?$/);
    const key = createPrivateKey(key1024.privateKeyPem);
    expect(key.asymmetricKeyType).toBe('rsa');
    expect(key.asymmetricKeyDetails?.modulusLength).toBe(1024);
    expect(key.asymmetricKeyDetails?.publicExponent).toBe(65537n);
  });

  it('builds the same key from the public or the private KeyObject', () => {
    const privateKey = createPrivateKey(key1024.privateKeyPem);
    expect(encryptionKeyFromPublicKey(createPublicKey(privateKey))).toBe(key1024.encryptionKey);
    expect(encryptionKeyFromPublicKey(privateKey)).toBe(key1024.encryptionKey);
  });

  it('refuses non-RSA keys', () => {
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    expect(() => encryptionKeyFromPublicKey(publicKey)).toThrow(/RSA/);
  });

  it('refuses to generate keys of an invalid size', async () => {
    await expect(generateRsaKeyMaterial(1020)).rejects.toThrow(/multiple of 8/);
    await expect(generateRsaKeyMaterial(40000)).rejects.toThrow(/multiple of 8/);
  });
});

describe.each([
  ['server parseEncryptionKey', (key: string) => parseEncryptionKey(key).bits],
  ['client parseEncryptionKey', (key: string) => clientParseEncryptionKey(key).bits],
])('%s', (_name, parse) => {
  it('parses generated keys', () => {
    expect(parse(key1024.encryptionKey)).toBe(1024);
    expect(parse(key2048.encryptionKey)).toBe(2048);
  });

  it.each([
    ['bits not a multiple of 8', '1020', /multiple of 8/],
    ['bits below 384', '376', /multiple of 8/],
    ['bits above 32768', '32776', /multiple of 8/],
    ['bits not an integer', '1024.0', /integer/],
    ['bits negative', '-1024', /integer/],
    ['bits empty', '', /integer/],
    ['bits not matching the modulus', '2048', /2048 bits/],
  ])('rejects %s', (_case, bits, message) => {
    expect(() => parse(withBits(key1024.encryptionKey, bits))).toThrow(message);
  });

  it.each([
    ['garbage', 'garbage!!'],
    ['empty', ''],
    ['base64 of text without "!"', b64('hello world')],
    ['two "!"', b64('1024!<RSAKeyValue>!</RSAKeyValue>')],
    ['missing XML', b64('1024!')],
    ['XML without Exponent', b64('1024!<RSAKeyValue><Modulus>AQAB</Modulus></RSAKeyValue>')],
    ['invalid UTF-8', Buffer.from([0x31, 0x30, 0x32, 0x34, 0x21, 0xff, 0xfe]).toString('base64')],
  ])('rejects %s', (_case, key) => {
    expect(() => parse(key)).toThrow(Error);
  });

  it('rejects malformed base64 (other alphabet, bad padding, inner whitespace)', () => {
    const key = key1024.encryptionKey;
    expect(() => parse(`${key.slice(0, 10)}-${key.slice(11)}`)).toThrow(/base64/);
    expect(() => parse(`${key}=`)).toThrow(/base64/);
    expect(() => parse(`${key.slice(0, 10)} ${key.slice(10)}`)).toThrow(/base64/);
  });

  it('rejects an even modulus and a bad exponent', () => {
    const { modulus } = parseEncryptionKey(key1024.encryptionKey);
    const even = Buffer.from(modulus);
    even[even.length - 1] = even[even.length - 1]! & 0xfe;
    expect(() => parse(b64(`1024!<RSAKeyValue><Modulus>${even.toString('base64')}</Modulus><Exponent>AQAB</Exponent></RSAKeyValue>`))).toThrow(/modulus/i);
    expect(() => parse(b64(`1024!<RSAKeyValue><Modulus>${modulus.toString('base64')}</Modulus><Exponent>AQAA</Exponent></RSAKeyValue>`))).toThrow(/exponent/i);
    expect(() => parse(b64(`1024!<RSAKeyValue><Modulus>${modulus.toString('base64')}</Modulus><Exponent>AQ==</Exponent></RSAKeyValue>`))).toThrow(/exponent/i);
  });
});

describe('server parseEncryptionKey', () => {
  it('returns the modulus and exponent bytes', () => {
    const parsed = parseEncryptionKey(key1024.encryptionKey);
    const jwk = createPrivateKey(key1024.privateKeyPem).export({ format: 'jwk' });
    expect(parsed.bits).toBe(1024);
    expect(parsed.modulus.equals(Buffer.from(jwk.n!, 'base64url'))).toBe(true);
    expect(parsed.exponent.equals(Buffer.from([1, 0, 1]))).toBe(true);
  });
});

describe('client parseEncryptionKey', () => {
  it('returns a node-forge public key with the same modulus', () => {
    const { publicKey } = clientParseEncryptionKey(key1024.encryptionKey);
    const { modulus } = parseEncryptionKey(key1024.encryptionKey);
    expect(publicKey.n.toString(16)).toBe(modulus.toString('hex').replace(/^0+/, ''));
    expect(publicKey.e.intValue()).toBe(65537);
  });

  it('tolerates surrounding whitespace (a pasted key)', () => {
    expect(clientParseEncryptionKey(`  ${key1024.encryptionKey}\n`).bits).toBe(1024);
  });
});
