import { apiKeyHint, describeApiKey, generateApiKey, hashApiKey } from '../../../src/merchants/key-format';

describe('api-key format', () => {
  it.each([
    ['public', 'test', /^PGW-PUBLICKEY-TEST-[0-9a-f]{32}$/],
    ['public', 'live', /^PGW-PUBLICKEY-LIVE-[0-9a-f]{32}$/],
    ['private', 'test', /^PGW-SECRETKEY-TEST-[0-9a-f]{32}$/],
    ['private', 'live', /^PGW-SECRETKEY-LIVE-[0-9a-f]{32}$/],
  ] as const)('generates %s %s keys in the documented format', (kind, mode, pattern) => {
    const key = generateApiKey(kind, mode);
    expect(key).toMatch(pattern);
    expect(describeApiKey(key)).toEqual({ kind, mode });
  });

  it('never generates the same key twice', () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey('private', 'test')));
    expect(keys.size).toBe(1000);
  });

  it('recognises only well-formed keys', () => {
    expect(describeApiKey('PGW-PUBLICKEY-TEST-' + 'A'.repeat(32))).toBeUndefined(); // upper-case hex
    expect(describeApiKey('PGW-PUBLICKEY-TEST-' + 'a'.repeat(31))).toBeUndefined();
    expect(describeApiKey('PGW-OTHERKEY-TEST-' + 'a'.repeat(32))).toBeUndefined();
    expect(describeApiKey('')).toBeUndefined();
  });

  it('hashes with SHA-256 and hints without revealing the key', () => {
    const key = 'PGW-SECRETKEY-TEST-0123456789abcdef0123456789abcdef';
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).toBe(hashApiKey(key));
    expect(apiKeyHint(key)).toBe('PGW-SECRETKEY-TEST-…cdef');
  });
});
