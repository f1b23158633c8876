import { randomBytes } from 'node:crypto';
import { parseMasterKey, SecretBox } from '../../../src/crypto/secret-box';

const HEX = '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f';
const MASTER = Buffer.from(HEX, 'hex');
const FORMAT = /^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]*$/;

describe('parseMasterKey', () => {
  it('accepts 64 hex characters, either case, with surrounding whitespace', () => {
    expect(parseMasterKey(HEX).equals(MASTER)).toBe(true);
    expect(parseMasterKey(HEX.toUpperCase()).equals(MASTER)).toBe(true);
    expect(parseMasterKey(` ${HEX}\n`).equals(MASTER)).toBe(true);
  });

  it('accepts base64 of exactly 32 bytes (padded, unpadded, URL-safe)', () => {
    const key = randomBytes(32);
    expect(parseMasterKey(key.toString('base64')).equals(key)).toBe(true);
    expect(parseMasterKey(key.toString('base64').replace(/=$/, '')).equals(key)).toBe(true);
    expect(parseMasterKey(key.toString('base64url')).equals(key)).toBe(true);
  });

  it.each([
    ['empty', ''],
    ['63 hex characters', HEX.slice(1)],
    ['65 hex characters', `${HEX}0`],
    ['hex with a non-hex character', `${HEX.slice(1)}g`],
    ['base64 of 31 bytes', randomBytes(31).toString('base64')],
    ['base64 of 33 bytes', randomBytes(33).toString('base64')],
    ['base64 of 16 bytes', randomBytes(16).toString('base64')],
    ['non-canonical base64', 'A'.repeat(42) + 'B='],
    ['a passphrase', 'correct horse battery staple'],
  ])('rejects %s with a clear message that does not echo the value', (_name, value) => {
    let message = '';
    try {
      parseMasterKey(value);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/MASTER_KEY must be 64 hex characters or the base64 of exactly 32 bytes/);
    if (value.length > 8) expect(message).not.toContain(value);
  });
});

describe('SecretBox', () => {
  const box = new SecretBox(MASTER);

  it.each([
    ['a PEM', '-----BEGIN PRIVATE KEY-----\nMIIEvQ…\n-----END PRIVATE KEY-----\n'],
    ['an empty string', ''],
    ['Unicode', 'whsec_ünïcödé 😀'],
    ['a long value', 'x'.repeat(100_000)],
  ])('round-trips %s', (_name, plaintext) => {
    const sealed = box.seal(plaintext, 'encryption-key:1');
    expect(sealed).toMatch(FORMAT);
    expect(sealed).not.toContain(plaintext.slice(0, 20) || '\u0000');
    expect(box.open(sealed, 'encryption-key:1')).toBe(plaintext);
  });

  it('uses a fresh IV every time', () => {
    const a = box.seal('same', 'ctx');
    const b = box.seal('same', 'ctx');
    expect(a).not.toBe(b);
    expect(a.split('.')[1]).not.toBe(b.split('.')[1]);
    expect(Buffer.from(a.split('.')[1]!, 'base64url')).toHaveLength(12);
    expect(Buffer.from(a.split('.')[2]!, 'base64url')).toHaveLength(16);
  });

  it('binds the context: a value moved to another row does not open', () => {
    const sealed = box.seal('secret', 'encryption-key:1');
    expect(() => box.open(sealed, 'encryption-key:2')).toThrow(/could not be opened/);
    expect(() => box.open(sealed, 'webhook-secret:1')).toThrow(/could not be opened/);
    expect(() => box.open(sealed, '')).toThrow(/could not be opened/);
  });

  it('does not open under another master key', () => {
    const sealed = box.seal('secret', 'ctx');
    expect(() => new SecretBox(randomBytes(32)).open(sealed, 'ctx')).toThrow(/could not be opened/);
    expect(new SecretBox(Buffer.from(MASTER)).open(sealed, 'ctx')).toBe('secret');
  });

  /** Flips one bit of one base64url part. */
  function flip(sealed: string, part: number, byte = 0): string {
    const parts = sealed.split('.');
    const raw = Buffer.from(parts[part]!, 'base64url');
    raw[byte] = raw[byte]! ^ 0x01;
    parts[part] = raw.toString('base64url');
    return parts.join('.');
  }

  it.each([
    ['the IV', (s: string) => flip(s, 1)],
    ['the tag', (s: string) => flip(s, 2, 15)],
    ['the ciphertext', (s: string) => flip(s, 3, 3)],
    ['the version', (s: string) => s.replace(/^v1\./, 'v2.')],
    ['a truncated ciphertext', (s: string) => s.slice(0, -2)],
    [
      'a truncated tag',
      (s: string) => {
        const p = s.split('.');
        p[2] = p[2]!.slice(0, 20);
        return p.join('.');
      },
    ],
    ['a missing part', (s: string) => s.split('.').slice(0, 3).join('.')],
    ['an extra part', (s: string) => `${s}.AAAA`],
    ['a non-base64url character', (s: string) => `${s.slice(0, -1)}+`],
    ['garbage', () => 'not a sealed value'],
  ])('detects tampering with %s', (_name, tamper) => {
    const sealed = box.seal('the webhook secret', 'webhook-secret:7');
    expect(() => box.open(tamper(sealed), 'webhook-secret:7')).toThrow(/could not be opened/);
  });

  it('refuses a master key that is not 32 bytes', () => {
    expect(() => new SecretBox(Buffer.alloc(16))).toThrow(/32 bytes/);
    expect(() => new SecretBox(Buffer.alloc(33))).toThrow(/32 bytes/);
  });

  it('opens what the MASTER_KEY parser and another instance produced', () => {
    const sealed = new SecretBox(parseMasterKey(HEX)).seal('pem', 'encryption-key:9');
    expect(new SecretBox(parseMasterKey(MASTER.toString('base64'))).open(sealed, 'encryption-key:9')).toBe('pem');
  });
});
