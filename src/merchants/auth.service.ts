import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock';
import { ExpiredKeyError, unauthenticated } from '../shared/errors';
import { describeApiKey, hashApiKey } from './key-format';
import type { Tenant } from './tenant';
import { runPrepared } from '../db/sql';
import type { ScopedCache, TenantCaches } from './tenant-cache';

interface KeyRow {
  id: number;
  environment_id: number;
  subsidiary_id: number;
  mode: 'test' | 'live';
  kind: 'public' | 'private';
  expires_at: string | null;
  hint: string;
}

interface KnownKey {
  tenant: Tenant;
  /** Epoch ms after which the key no longer authenticates; null: no expiry. */
  expiresAt: number | null;
}

const KEY_LOOKUP = {
  name: 'pgw_auth_key_v3',
  text: `select k.id, k.environment_id, e.subsidiary_id, e.mode, k.kind, k.expires_at, k.hint
           from api_key k join app_environment e on e.id = k.environment_id
          where k.key_hash = $1`,
};

/**
 * Resolves an api-key to its merchant environment. Known keys are cached per instance by hash
 * (see TenantCaches: a rotation anywhere drops them everywhere at commit); the expiry is
 * checked at every use, so a key with a grace period stops at its instant even if nothing is
 * announced then. Unknown keys are never cached.
 */
export class AuthService {
  private readonly keys?: ScopedCache<KnownKey>;

  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    caches?: TenantCaches,
  ) {
    this.keys = caches?.create<KnownKey>();
  }

  /**
   * Throws `unauthenticated` for a missing, malformed or unknown key, all alike; for a key
   * that expired (replaced, its grace period over) an ExpiredKeyError, which REST answers in
   * the same legacy words and GraphQL names as expired.
   */
  async authenticate(apiKey: string | undefined): Promise<Tenant> {
    if (typeof apiKey !== 'string') throw unauthenticated();
    const trimmed = apiKey.trim();
    const described = describeApiKey(trimmed);
    if (!described) throw unauthenticated();
    const hash = hashApiKey(trimmed);
    const known = this.keys ? await this.keys.get(hash, () => this.load(hash)) : (await this.load(hash))?.value;
    if (!known) throw unauthenticated();
    if (known.expiresAt !== null && known.expiresAt <= this.clock.now().getTime()) throw new ExpiredKeyError();
    // The markers in the key are part of what was hashed, so they cannot disagree with the row.
    return known.tenant;
  }

  private async load(hash: string) {
    const row = (await runPrepared<KeyRow>(this.orm, KEY_LOOKUP, [hash]))[0];
    if (!row) return null;
    const expiresAt = row.expires_at ? new Date(row.expires_at).getTime() : null;
    const tenant: Tenant = Object.freeze({
      environmentId: row.environment_id,
      subsidiaryId: row.subsidiary_id,
      mode: row.mode,
      keyKind: row.kind,
      keyId: Number(row.id),
      keyExpiresAt: expiresAt,
      keyHint: row.hint,
    });
    return {
      value: { tenant, expiresAt },
      environmentId: row.environment_id,
      subsidiaryId: row.subsidiary_id,
    };
  }
}
