import { randomBytes } from 'node:crypto';
import { syntheticBytesNeeded, unpadPkcs1v15 } from '../../../src/crypto/pkcs1';

const K = 128; // RSA-1024
const MAX = K - 11;

/** 0x00 || 0x02 || PS (psLength non-zero bytes) || 0x00 || M, padded out to exactly k bytes by the PS length. */
function em(message: Buffer, k = K): Buffer {
  const psLength = k - 3 - message.length;
  const ps = Buffer.alloc(psLength, 0x5a);
  return Buffer.concat([Buffer.from([0x00, 0x02]), ps, Buffer.from([0x00]), message]);
}

/** The documented synthetic layout: [0, k-11) candidate bytes, then two length bytes. */
function synthetic(lengthBytes: [number, number] = [0, 5], k = K): Buffer {
  const s = randomBytes(syntheticBytesNeeded(k));
  s[k - 11] = lengthBytes[0];
  s[k - 11 + 1] = lengthBytes[1];
  return s;
}

function expectSynthetic(result: Buffer, s: Buffer, k = K): void {
  const candidate = s.subarray(0, k - 11);
  expect(result.length).toBeLessThanOrEqual(k - 11);
  expect(result.equals(candidate.subarray(candidate.length - result.length))).toBe(true);
}

describe('unpadPkcs1v15', () => {
  it('returns M from a valid encoded message', () => {
    const m = Buffer.from('{"reference":"ORD-1"}');
    const s = synthetic();
    expect(unpadPkcs1v15(em(m), s).equals(m)).toBe(true);
  });

  it('accepts exactly 8 PS bytes (the longest message, k - 11 bytes)', () => {
    const m = randomBytes(MAX);
    const out = unpadPkcs1v15(em(m), synthetic());
    expect(out.length).toBe(MAX);
    expect(out.equals(m)).toBe(true);
  });

  it('returns an empty M when the separator is the last byte', () => {
    const out = unpadPkcs1v15(em(Buffer.alloc(0)), synthetic([0, 9]));
    expect(out.length).toBe(0);
  });

  it('keeps zero bytes inside M (only the first zero after PS separates)', () => {
    const m = Buffer.from([0x00, 0x41, 0x00, 0x00]);
    expect(unpadPkcs1v15(em(m), synthetic()).equals(m)).toBe(true);
  });

  it('does not return a view of the input', () => {
    const m = Buffer.from('abc');
    const input = em(m);
    const out = unpadPkcs1v15(input, synthetic());
    input.fill(0);
    expect(out.toString()).toBe('abc');
  });

  const invalid: Array<[string, () => Buffer]> = [
    [
      'first byte is not zero',
      () => {
        const e = em(Buffer.from('{"a":1}'));
        e[0] = 0x01;
        return e;
      },
    ],
    [
      'second byte is not 2 (block type 1)',
      () => {
        const e = em(Buffer.from('{"a":1}'));
        e[1] = 0x01;
        return e;
      },
    ],
    [
      'second byte is 0',
      () => {
        const e = em(Buffer.from('{"a":1}'));
        e[1] = 0x00;
        return e;
      },
    ],
    [
      'only 7 PS bytes',
      () => {
        const e = em(Buffer.from('{"a":1}'));
        e[2 + 7] = 0x00;
        return e;
      },
    ],
    [
      'PS starting with a zero byte',
      () => {
        const e = em(Buffer.from('{"a":1}'));
        e[2] = 0x00;
        return e;
      },
    ],
    [
      'no zero separator',
      () => {
        const e = Buffer.alloc(K, 0x33);
        e[0] = 0;
        e[1] = 2;
        return e;
      },
    ],
    ['all zero bytes', () => Buffer.alloc(K)],
  ];

  it.each(invalid)('returns the synthetic message when %s', (_name, build) => {
    const s = synthetic([0x12, 0x34]);
    const out = unpadPkcs1v15(build(), s);
    expectSynthetic(out, s);
    // Deterministic for the same synthetic input, and unrelated to EM's content.
    expect(unpadPkcs1v15(build(), s).equals(out)).toBe(true);
    expect(out.includes(Buffer.from('{"a":1}'))).toBe(false);
  });

  it('takes the synthetic length from the synthetic bytes, always within [0, k - 11]', () => {
    const bad = Buffer.alloc(K);
    expect(unpadPkcs1v15(bad, synthetic([0, 5])).length).toBe(5);
    expect(unpadPkcs1v15(bad, synthetic([0, 0])).length).toBe(0);
    expect(unpadPkcs1v15(bad, synthetic([0, MAX])).length).toBe(MAX);
    expect(unpadPkcs1v15(bad, synthetic([0xff, MAX + 1])).length).toBe(0); // folded back into range
    expect(unpadPkcs1v15(bad, synthetic([0xff, 0xff])).length).toBe(127 - (MAX + 1));
    for (let i = 0; i < 200; i++) {
      const s = randomBytes(syntheticBytesNeeded(K));
      expectSynthetic(unpadPkcs1v15(bad, s), s);
    }
  });

  it('works for other key sizes (2048 and 4096 bits)', () => {
    for (const k of [256, 512]) {
      const m = Buffer.from('{"big":true}');
      expect(unpadPkcs1v15(em(m, k), synthetic([0, 5], k)).equals(m)).toBe(true);
      const bad = em(m, k);
      bad[1] = 3;
      const s = synthetic([0, 40], k);
      const out = unpadPkcs1v15(bad, s);
      expect(out.length).toBe(40);
      expectSynthetic(out, s, k);
    }
  });

  it('rejects a synthetic buffer that is too short (a programming error)', () => {
    expect(() => unpadPkcs1v15(em(Buffer.from('x')), Buffer.alloc(MAX))).toThrow(RangeError);
    expect(() => unpadPkcs1v15(Buffer.alloc(10), Buffer.alloc(10))).toThrow(RangeError);
  });
});
