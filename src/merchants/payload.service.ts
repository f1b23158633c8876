import { createPrivateKey } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock';
import type { Tenant } from './tenant';
import { PayloadDecryptionError, PayloadDecryptor } from '../crypto/payload-decryptor';
import type { DecryptPool } from '../crypto/decrypt-pool';
import { runPrepared } from '../db/sql';
import { nestedDeeperThan } from '../shared/nesting';
import type { Loaded, ScopedCache, TenantCaches } from './tenant-cache';
import type { SecretBox } from '../crypto/secret-box';

interface KeyRow {
  id: number;
  private_key_sealed: string;
  expires_at: string | Date | null;
}

/** An environment's usable encryption keys, newest first, ready for the decryption pool. */
interface EnvironmentKeys {
  keys: Array<{ expiresAt: number | null; decryptor: PayloadDecryptor }>;
}

const KEYS_OF_ENVIRONMENT = {
  name: 'pgw_encryption_keys_v1',
  text: `select k.id, k.private_key_sealed, k.expires_at, e.subsidiary_id from encryption_key k join app_environment e on e.id = k.environment_id
          where k.environment_id = $1 and (k.expires_at is null or k.expires_at > $2) order by k.id desc`,
};

/**
 * Decrypts the `data` of Encrypted endpoints with the tenant's encryption key(s). During a
 * rotation's grace period both the new and the old key are tried. Parsed private keys are
 * cached by key id (a key never changes; expiry is checked on every call), and an environment's
 * keys per instance (TenantCaches: a rotation anywhere drops them at commit). The RSA work runs
 * in the decryption pool's worker threads unless it is cheap (see DecryptPool).
 */
/**
 * Deepest nesting of a decrypted plaintext that reaches an endpoint (real plaintexts stay under
 * five; a field nested past its own limit gets its validation message). Far below where
 * recursion over it runs out of stack (about 2,500 levels).
 */
const MAX_PLAINTEXT_DEPTH = 1000;

export class PayloadService {
  private readonly decryptors = new Map<number, PayloadDecryptor>();
  private readonly environments?: ScopedCache<EnvironmentKeys>;

  constructor(
    private readonly orm: MikroORM,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly pool: DecryptPool,
    caches?: TenantCaches,
  ) {
    this.environments = caches?.create<EnvironmentKeys>();
  }

  async decrypt(tenant: Tenant, data: string): Promise<Record<string, unknown>> {
    const environmentId = tenant.environmentId;
    const cached = this.environments ? await this.environments.get(environmentId, () => this.load(environmentId)) : (await this.load(environmentId)).value;
    // Expiry checked at use: a key with a grace period stops at its instant, announced or not.
    const now = this.clock.now().getTime();
    for (const key of cached!.keys) {
      if (key.expiresAt !== null && key.expiresAt <= now) continue;
      let plaintext: Record<string, unknown>;
      try {
        plaintext = await this.pool.decrypt(key.decryptor, data);
      } catch (err) {
        if (!(err instanceof PayloadDecryptionError)) throw err;
        continue;
      }
      // The encrypted body's own depth limit sees only `{ data }`: the plaintext gets a limit too, so
      // the recursive code after it (the idempotency fingerprint, validation) never runs out of stack.
      if (nestedDeeperThan(plaintext, MAX_PLAINTEXT_DEPTH)) throw new PayloadDecryptionError();
      return plaintext;
    }
    throw new PayloadDecryptionError();
  }

  private async load(environmentId: number): Promise<Loaded<EnvironmentKeys>> {
    const rows = (await runPrepared(this.orm, KEYS_OF_ENVIRONMENT, [environmentId, this.clock.now()])) as unknown as Array<KeyRow & { subsidiary_id: number }>;
    const platform = this.orm.em.getPlatform();
    const keys = rows.map((row) => ({
      expiresAt: row.expires_at === null ? null : (platform.parseDate(row.expires_at as string) as Date).getTime(),
      decryptor: this.decryptorFor(row),
    }));
    return { value: { keys }, environmentId, subsidiaryId: rows[0]?.subsidiary_id };
  }

  /** Payloads decrypted in worker threads so far (the others ran on the event loop). */
  get workerDecryptions(): number {
    return this.pool.workerDecryptions;
  }

  /** Stops the worker threads; decryptions still queued fail. */
  close(): Promise<void> {
    return this.pool.close();
  }

  private decryptorFor(row: KeyRow): PayloadDecryptor {
    let decryptor = this.decryptors.get(row.id);
    if (!decryptor) {
      const pem = this.secrets.open(row.private_key_sealed, `encryption-key:${row.id}`);
      decryptor = new PayloadDecryptor(createPrivateKey(pem));
      this.decryptors.set(row.id, decryptor);
    }
    return decryptor;
  }
}
