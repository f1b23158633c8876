import { MasterKeyMismatchError, verifyMasterKey, type MasterKeyCheckStore } from '../../../src/crypto/master-key';
import { SecretBox } from '../../../src/crypto/secret-box';

/** An in-memory stand-in for the one-row table, answering the check's three statements. */
function memoryStore(present = true): MasterKeyCheckStore & { value: string | null } {
  const store = {
    value: null as string | null,
    async execute(sql: string, params: unknown[] = []) {
      if (sql.includes('to_regclass')) return [{ present }];
      if (sql.startsWith('select check_value')) return store.value === null ? [] : [{ check_value: store.value }];
      if (sql.startsWith('insert')) {
        store.value ??= params[0] as string;
        return [];
      }
      throw new Error(`unexpected SQL: ${sql}`);
    },
  };
  return store;
}

describe('master key check', () => {
  const a = new SecretBox(Buffer.alloc(32, 1));
  const b = new SecretBox(Buffer.alloc(32, 2));

  it('stores a check value at first start, then accepts the same key and refuses another', async () => {
    const store = memoryStore();
    await expect(verifyMasterKey(store, a, async () => 'none')).resolves.toBe('stored');
    expect(store.value).toMatch(/^v1\./);
    await expect(verifyMasterKey(store, a, async () => 'none')).resolves.toBe('matched');
    await expect(verifyMasterKey(store, b, async () => 'none')).rejects.toBeInstanceOf(MasterKeyMismatchError);
    await expect(verifyMasterKey(store, b, async () => 'none')).rejects.toThrow(
      /^MASTER_KEY does not match this database: the check value stored at its first start does not open with it\./,
    );
  });

  it('never records a key that cannot open the secrets already stored', async () => {
    const store = memoryStore();
    await expect(verifyMasterKey(store, b, async () => 'failed')).rejects.toThrow(/a secret already stored in the database does not open with it/);
    expect(store.value).toBeNull();
    await expect(verifyMasterKey(store, a, async () => 'opened')).resolves.toBe('stored');
  });

  it('does nothing before the migrations created the table', async () => {
    await expect(verifyMasterKey(memoryStore(false), a, async () => 'failed')).resolves.toBe('skipped');
  });
});
