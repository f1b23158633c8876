import { createPrivateKey } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock';
import type { Tenant } from '../merchants/tenant';
import { PayloadDecryptionError, PayloadDecryptor } from './payload-decryptor';
import type { DecryptPool } from './decrypt-pool';
import type { SecretBox } from './secret-box';

interface KeyRow {
  id: number;
  private_key_sealed: string;
  expires_at: Date | null;
}

/**
 * Decrypts the `data` of Encrypted endpoints with the tenant's encryption key(s). During a
 * rotation's grace period both the new and the old key are tried. Parsed private keys are
 * cached by key id (a key never changes; expiry is checked on every call). The RSA work runs
 * in the decryption pool's worker threads unless it is cheap (see DecryptPool).
 */
export class PayloadService {
  private readonly decryptors = new Map<number, PayloadDecryptor>();

  constructor(
    private readonly orm: MikroORM,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly pool: DecryptPool,
  ) {}

  async decrypt(tenant: Tenant, data: string): Promise<Record<string, unknown>> {
    const now = this.clock.now();
    const rows: KeyRow[] = await this.orm.em.getConnection().execute(
      `select id, private_key_sealed, expires_at from encryption_key
        where environment_id = ? and (expires_at is null or expires_at > ?) order by id desc`,
      [tenant.environmentId, now],
    );
    for (const row of rows) {
      try {
        return await this.pool.decrypt(this.decryptorFor(row), data);
      } catch (err) {
        if (!(err instanceof PayloadDecryptionError)) throw err;
      }
    }
    throw new PayloadDecryptionError();
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
