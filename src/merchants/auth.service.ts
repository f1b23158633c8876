import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock';
import { forbidden, unauthenticated } from '../shared/errors';
import { describeApiKey, hashApiKey } from './key-format';
import type { Tenant } from './tenant';

interface KeyRow {
  environment_id: number;
  subsidiary_id: number;
  mode: 'test' | 'live';
  kind: 'public' | 'private';
  expires_at: Date | null;
}

/** Resolves an api-key to its merchant environment. */
export class AuthService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
  ) {}

  /** Throws `unauthenticated` for a missing, malformed, unknown or expired key, all alike. */
  async authenticate(apiKey: string | undefined): Promise<Tenant> {
    if (typeof apiKey !== 'string') throw unauthenticated();
    const described = describeApiKey(apiKey.trim());
    if (!described) throw unauthenticated();
    const rows: KeyRow[] = await this.orm.em.getConnection().execute(
      `select k.environment_id, e.subsidiary_id, e.mode, k.kind, k.expires_at
         from api_key k join app_environment e on e.id = k.environment_id
        where k.key_hash = ?`,
      [hashApiKey(apiKey.trim())],
    );
    const row = rows[0];
    if (!row) throw unauthenticated();
    if (row.expires_at && new Date(row.expires_at).getTime() <= this.clock.now().getTime()) throw unauthenticated();
    // The markers in the key are part of what was hashed, so they cannot disagree with the row.
    return { environmentId: row.environment_id, subsidiaryId: row.subsidiary_id, mode: row.mode, keyKind: row.kind };
  }

  /** For operations only a server may do (order verification, merchant settings). */
  requirePrivateKey(tenant: Tenant): void {
    if (tenant.keyKind !== 'private') throw forbidden('This operation requires the private key.');
  }
}
