import { constants, createPrivateKey, createPublicKey, publicEncrypt, randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { generateRsaKeyMaterial, type RsaKeyMaterial } from '../../../src/crypto/encryption-key';
import { encryptPayload } from '../../support/payload-client';
import { PAYLOAD_DECRYPTION_FAILED, PayloadDecryptionError, PayloadDecryptor, MAX_BLOCKS } from '../../../src/crypto/payload-decryptor';

const K = 128; // RSA-1024 in most tests
const SLICE = K - 11;

let key: RsaKeyMaterial;
let otherKey: RsaKeyMaterial;
let decryptor: PayloadDecryptor;

beforeAll(async () => {
  [key, otherKey] = await Promise.all([generateRsaKeyMaterial(1024), generateRsaKeyMaterial(1024)]);
  decryptor = new PayloadDecryptor(createPrivateKey(key.privateKeyPem));
});

/** `{"p":"xxx…"}` of exactly n UTF-8 bytes. */
function jsonOfBytes(n: number): string {
  const text = `{"p":"${'x'.repeat(n - 8)}"}`;
  expect(Buffer.byteLength(text)).toBe(n);
  return text;
}

const blocksOf = (data: string): number => Buffer.from(data, 'base64').length / K;

/** node-forge decryption of each block on its own (the raw slices the client made). */
function forgeSlices(data: string, pem: string): Buffer[] {
  const privateKey = forge.pki.privateKeyFromPem(pem);
  const raw = Buffer.from(data, 'base64');
  const slices: Buffer[] = [];
  for (let offset = 0; offset < raw.length; offset += K) {
    const block = raw.subarray(offset, offset + K).toString('binary');
    slices.push(Buffer.from(privateKey.decrypt(block, 'RSAES-PKCS1-V1_5'), 'binary'));
  }
  return slices;
}

function expectDecryptionFailure(data: unknown, using: PayloadDecryptor = decryptor): void {
  let caught: unknown;
  try {
    using.decrypt(data as string);
  } catch (err) {
    caught = err;
  }
  expect(caught).toBeInstanceOf(PayloadDecryptionError);
  const error = caught as PayloadDecryptionError;
  expect(error.message).toBe(PAYLOAD_DECRYPTION_FAILED);
  expect(error.name).toBe('PayloadDecryptionError');
  expect(error.cause).toBeUndefined(); // nothing more specific travels with it
}

describe('PayloadDecryptor', () => {
  it('knows the modulus size', () => {
    expect(decryptor.modulusBytes).toBe(K);
  });

  it('refuses more than MAX_BLOCKS blocks with the same error (bounded work per request)', () => {
    const text = JSON.stringify({ pad: 'x'.repeat((K - 11) * MAX_BLOCKS) });
    const data = encryptPayload(text, key.encryptionKey);
    expect(blocksOf(data)).toBeGreaterThan(MAX_BLOCKS);
    expectDecryptionFailure(data);
  });

  it('refuses a public or non-RSA key', () => {
    expect(() => new PayloadDecryptor(createPublicKey(key.privateKeyPem))).toThrow(/RSA private key/);
  });

  describe('round trip client → server', () => {
    it('decrypts a single-block object payload', () => {
      const order = { reference: 'ORD-1', amount: { value: '10.00', currency: 'EUR' }, tags: ['a'], paid: false, note: null };
      const data = encryptPayload(order, key.encryptionKey);
      expect(blocksOf(data)).toBe(1);
      expect(decryptor.decrypt(data)).toEqual(order);
    });

    it('decrypts a string plaintext and gives a fresh ciphertext every time (random padding)', () => {
      const a = encryptPayload('{"a":1}', key.encryptionKey);
      const b = encryptPayload('{"a":1}', key.encryptionKey);
      expect(a).not.toBe(b);
      expect(decryptor.decrypt(a)).toEqual({ a: 1 });
      expect(decryptor.decrypt(b)).toEqual({ a: 1 });
    });

    it.each([
      [SLICE - 1, 1],
      [SLICE, 1], // exactly k - 11 bytes: still one block
      [SLICE + 1, 2], // k - 10 bytes: a second block of 1 byte
      [2 * SLICE, 2],
      [2 * SLICE + 1, 3],
      [10 * SLICE + 17, 11],
    ])('decrypts a %i-byte plaintext sent as %i block(s)', (bytes, blocks) => {
      const text = jsonOfBytes(bytes);
      const data = encryptPayload(text, key.encryptionKey);
      expect(blocksOf(data)).toBe(blocks);
      expect(Buffer.from(data, 'base64').length).toBe(blocks * K); // every block exactly k bytes
      const slices = forgeSlices(data, key.privateKeyPem);
      expect(slices.map((s) => s.length)).toEqual(Array.from({ length: blocks }, (_, i) => Math.min(SLICE, bytes - i * SLICE)));
      expect(decryptor.decrypt(data)).toEqual(JSON.parse(text));
    });

    it.each([
      ['€ (3 bytes)', '€', 1],
      ['€ (3 bytes)', '€', 2],
      ['😀 (4 bytes)', '😀', 1],
      ['😀 (4 bytes)', '😀', 2],
      ['😀 (4 bytes)', '😀', 3],
      ['é (2 bytes)', 'é', 1],
    ])('decrypts %s straddling the block boundary with %i byte(s) in the first block', (_name, char, bytesBefore) => {
      const prefix = `{"p":"${'x'.repeat(SLICE - bytesBefore - 6)}`;
      const text = `${prefix}${char}${'ü'.repeat(80)}"}`;
      expect(Buffer.byteLength(prefix)).toBe(SLICE - bytesBefore);
      const data = encryptPayload(text, key.encryptionKey);
      const [first] = forgeSlices(data, key.privateKeyPem);
      // The character really is cut: the first slice ends with a partial sequence.
      expect(first!.subarray(SLICE - bytesBefore).equals(Buffer.from(char).subarray(0, bytesBefore))).toBe(true);
      expect(() => new TextDecoder('utf-8', { fatal: true }).decode(first)).toThrow();
      expect(decryptor.decrypt(data)).toEqual(JSON.parse(text));
    });

    it('works with a 2048-bit key (k = 256)', async () => {
      const big = await generateRsaKeyMaterial(2048);
      const d = new PayloadDecryptor(createPrivateKey(big.privateKeyPem));
      expect(d.modulusBytes).toBe(256);
      for (const [bytes, blocks] of [
        [245, 1],
        [246, 2],
        [1024, 5],
      ] as const) {
        const text = `{"p":"${'ß'.repeat((bytes - 8) / 2)}${(bytes - 8) % 2 ? 'x' : ''}"}`;
        expect(Buffer.byteLength(text)).toBe(bytes);
        const data = encryptPayload(text, big.encryptionKey);
        expect(Buffer.from(data, 'base64').length).toBe(blocks * 256);
        expect(d.decrypt(data)).toEqual(JSON.parse(text));
      }
    });
  });

  describe('interoperability', () => {
    it('node-forge (the old server path) decrypts what the client encrypted', () => {
      const text = JSON.stringify({ reference: 'ORD-42', customer: { name: 'Zoë Ærø' } });
      const data = encryptPayload(text, key.encryptionKey);
      const forgeKey = forge.pki.privateKeyFromPem(key.privateKeyPem);
      const plain = forgeKey.decrypt(forge.util.decode64(data), 'RSAES-PKCS1-V1_5');
      expect(JSON.parse(forge.util.decodeUtf8(plain))).toEqual(JSON.parse(text));
    });

    it('decrypts what another PKCS#1 v1.5 implementation (OpenSSL via Node) encrypted', () => {
      const text = JSON.stringify({ from: 'openssl', n: 1 });
      const block = publicEncrypt({ key: createPublicKey(key.privateKeyPem), padding: constants.RSA_PKCS1_PADDING }, Buffer.from(text));
      expect(decryptor.decrypt(block.toString('base64'))).toEqual({ from: 'openssl', n: 1 });
    });
  });

  describe('every failure is the same PayloadDecryptionError', () => {
    /** Raw RSA of a hand-built EM (bypasses the client's padding). */
    const rawEncrypt = (em: Buffer, pem = key.privateKeyPem): string =>
      publicEncrypt({ key: createPublicKey(pem), padding: constants.RSA_NO_PADDING }, em).toString('base64');

    function em(message: Buffer, psLength = K - 3 - message.length): Buffer {
      return Buffer.concat([Buffer.from([0x00, 0x02]), Buffer.alloc(psLength, 0x77), Buffer.from([0x00]), message]);
    }

    it('sanity: a hand-built valid EM decrypts', () => {
      expect(decryptor.decrypt(rawEncrypt(em(Buffer.from('{"ok":true}'))))).toEqual({ ok: true });
    });

    it.each([
      [
        'tampered ciphertext (one bit flipped)',
        () => {
          const raw = Buffer.from(encryptPayload({ a: 1 }, key.encryptionKey), 'base64');
          raw[40] = raw[40]! ^ 0x01;
          return raw.toString('base64');
        },
      ],
      [
        'tampered second block of two',
        () => {
          const raw = Buffer.from(encryptPayload(jsonOfBytes(200), key.encryptionKey), 'base64');
          raw[K + 5] = raw[K + 5]! ^ 0x80;
          return raw.toString('base64');
        },
      ],
      [
        'ciphertext truncated by one byte',
        () =>
          Buffer.from(encryptPayload({ a: 1 }, key.encryptionKey), 'base64')
            .subarray(0, K - 1)
            .toString('base64'),
      ],
      [
        'ciphertext with one byte too many',
        () => Buffer.concat([Buffer.from(encryptPayload({ a: 1 }, key.encryptionKey), 'base64'), Buffer.from([0])]).toString('base64'),
      ],
      [
        'ciphertext truncated by a whole block',
        () =>
          Buffer.from(encryptPayload(jsonOfBytes(300), key.encryptionKey), 'base64')
            .subarray(0, 2 * K)
            .toString('base64'),
      ],
      [
        'blocks in the wrong order',
        () => {
          const raw = Buffer.from(encryptPayload(jsonOfBytes(200), key.encryptionKey), 'base64');
          return Buffer.concat([raw.subarray(K), raw.subarray(0, K)]).toString('base64');
        },
      ],
      ['a valid JSON object encrypted under another key', () => encryptPayload({ a: 1 }, otherKey.encryptionKey)],
      ['a block numerically ≥ the modulus', () => Buffer.alloc(K, 0xff).toString('base64')],
      ['random bytes', () => randomBytes(K).toString('base64')],
      ['bad base64: other characters', () => 'not base64 at all!'],
      ['bad base64: missing padding', () => encryptPayload({ a: 1 }, key.encryptionKey).replace(/=+$/, '')],
      ['bad base64: base64url alphabet', () => Buffer.from(encryptPayload({ a: 1 }, key.encryptionKey), 'base64').toString('base64url')],
      [
        'bad base64: embedded newline',
        () => {
          const d = encryptPayload({ a: 1 }, key.encryptionKey);
          return `${d.slice(0, 76)}\n${d.slice(76)}`;
        },
      ],
      [
        'bad base64: non-canonical trailing bits',
        () => {
          const d = encryptPayload({ a: 1 }, key.encryptionKey); // 128 bytes → ends in "X="; X has 2 unused bits
          const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
          const last = d[d.length - 2]!;
          return `${d.slice(0, -2)}${alphabet[alphabet.indexOf(last) ^ 1]}=`;
        },
      ],
      ['empty string', () => ''],
      ['not a string', () => 42],
      ['plaintext that is not JSON', () => encryptPayload('hello, not json', key.encryptionKey)],
      ['plaintext that is a JSON array', () => encryptPayload('[{"a":1}]', key.encryptionKey)],
      ['plaintext that is JSON null', () => encryptPayload('null', key.encryptionKey)],
      ['plaintext that is a JSON string', () => encryptPayload('"text"', key.encryptionKey)],
      ['plaintext that is a JSON number', () => encryptPayload('42', key.encryptionKey)],
      ['plaintext that is invalid UTF-8', () => rawEncrypt(em(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0x22, 0x7d])))],
      // 0x01 || … is still below the modulus (n ≥ 2^1023), so this reaches the unpadding.
      [
        'bad padding: first byte not zero',
        () => {
          const e = em(Buffer.from('{"a":1}'));
          e[0] = 0x01;
          return rawEncrypt(e);
        },
      ],
      [
        'bad padding: block type 1 around a valid object',
        () => {
          const e = em(Buffer.from('{"a":1}'));
          e[1] = 0x01;
          return rawEncrypt(e);
        },
      ],
      ['bad padding: 7 PS bytes around a valid object', () => shortPs()],
      [
        'bad padding: no separator',
        () => {
          const e = Buffer.alloc(K, 0x41);
          e[0] = 0;
          e[1] = 2;
          return rawEncrypt(e);
        },
      ],
    ])('%s', (_name, build) => {
      expectDecryptionFailure(build());
    });

    /** 00 02, 7 PS bytes, 00, then a valid object padded with spaces to fill k bytes. */
    function shortPs(): string {
      const body = Buffer.from(`{"a":1}${' '.repeat(K - 3 - 7 - 7)}`);
      const e = em(body, 7);
      expect(e.length).toBe(K);
      return rawEncrypt(e);
    }

    it('fails the same way when only the padding is wrong and the message is a valid object', () => {
      // Same message, valid vs invalid padding: only the valid one decrypts; no other difference is observable.
      const message = Buffer.from('{"a":1}');
      expect(decryptor.decrypt(rawEncrypt(em(message)))).toEqual({ a: 1 });
      const bad = em(message);
      bad[1] = 0x03;
      expectDecryptionFailure(rawEncrypt(bad));
    });

    it('is deterministic for the same bad ciphertext and another decryptor of the same key', () => {
      const bad = em(Buffer.from('{"a":1}'));
      bad[1] = 0x03;
      const data = rawEncrypt(bad);
      const again = new PayloadDecryptor(createPrivateKey(key.privateKeyPem));
      expectDecryptionFailure(data);
      expectDecryptionFailure(data, again);
    });

    it('keeps working after failures', () => {
      expectDecryptionFailure('###');
      expect(decryptor.decrypt(encryptPayload({ still: 'fine' }, key.encryptionKey))).toEqual({ still: 'fine' });
    });
  });
});

describe('encryptPayload (client)', () => {
  it('rejects an empty plaintext', () => {
    expect(() => encryptPayload('', key.encryptionKey)).toThrow(/empty/);
  });

  it('rejects a plaintext that cannot be UTF-8 encoded (lone surrogate)', () => {
    expect(() => encryptPayload('{"a":"\ud800"}', key.encryptionKey)).toThrow(/Unicode/);
  });

  it('rejects a malformed encryption key', () => {
    expect(() => encryptPayload({ a: 1 }, 'garbage')).toThrow(/base64/);
  });

  it('outputs standard base64 of whole k-byte blocks', () => {
    const data = encryptPayload(jsonOfBytes(500), key.encryptionKey);
    expect(data).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(Buffer.from(data, 'base64').length % K).toBe(0);
  });
});
