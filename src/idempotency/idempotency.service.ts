import { createHmac, hkdfSync } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { DomainError, validationError } from '../shared/errors';
import type { Clock } from '../shared/clock';
import type { Tenant } from '../merchants/tenant';
import { isIdempotencyKey } from '../shared/idempotency-key';

export interface StoredResponse {
  status: number;
  body: string;
  replayed: boolean;
}

/** HKDF `info` of the fingerprint key: one purpose, one key, derived from MASTER_KEY. */
const FINGERPRINT_KEY_INFO = 'checkout-gateway/idempotency-fingerprint/v1';

/** The key of request fingerprints, derived (HKDF-SHA256) from the master key: never the master key itself. */
export function fingerprintKey(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), FINGERPRINT_KEY_INFO, 32));
}

/** JSON with every object's keys in order: the same content gives the same text, however a client ordered it. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
  );
}

const RETENTION_MS = 24 * 3600 * 1000;
/** A key still "in progress" after this long belongs to a request whose process died: it is released. */
const ABANDONED_MS = 60 * 1000;

/**
 * Answers that are not stored: a fault (5xx) the client may retry, and a refusal of the
 * caller (401, 403, 429) that did no work. A refusal stored under the key would otherwise be
 * replayed to the same merchant's next request with that key, even one made with the right
 * key or after the rate window has passed.
 */
function isStored(status: number): boolean {
  return status < 500 && status !== 401 && status !== 403 && status !== 429;
}

/**
 * Idempotency-Key handling: the first request with a key does the work and its answer is
 * stored; a repeat with the same content within 24 hours gets the stored answer without the
 * work being done again (faults and refusals of the caller are not stored: see isStored). A repeat while the first is still running waits for it (up to
 * `waitMs`), then gets a conflict. The same key with other content is refused.
 */
export class IdempotencyService {
  constructor(
    private readonly orm: MikroORM,
    private readonly clock: Clock,
    /** From `fingerprintKey(masterKey)`. */
    private readonly fingerprintSecret: Buffer,
    private readonly waitMs = 10_000,
  ) {}

  static validateKey(key: string): void {
    if (!isIdempotencyKey(key)) throw validationError('The Idempotency-Key header must be 1 to 255 visible ASCII characters.');
  }

  /**
   * What identifies a request: HMAC-SHA256, under a key derived from MASTER_KEY, of its parts
   * (method, matched route, params and the whole content; for Encrypted endpoints the whole
   * decrypted plaintext, card number included). Keyed, so the stored value tells nothing of a
   * card without the master key; whole, so another card with the same last four digits and
   * expiry is another request. 64 hex characters.
   */
  fingerprint(parts: unknown[]): string {
    return createHmac('sha256', this.fingerprintSecret).update(canonicalJson(parts)).digest('hex');
  }

  /** Deletes answers older than the 24-hour window; returns how many. */
  async purgeExpired(): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - RETENTION_MS);
    const abandoned = new Date(this.clock.now().getTime() - ABANDONED_MS);
    const res = await this.orm.em
      .getConnection()
      .execute(`delete from idempotency_key where created_at < ? or (state = 'in_progress' and created_at < ?)`, [cutoff, abandoned], 'run');
    return (res as { affectedRows?: number }).affectedRows ?? 0;
  }

  async run(tenant: Tenant, key: string, fingerprint: string, work: () => Promise<{ status: number; body: string }>): Promise<StoredResponse> {
    IdempotencyService.validateKey(key);
    const conn = this.orm.em.getConnection();
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const inserted: Array<{ id: string }> = await conn.execute(
        `insert into idempotency_key (environment_id, key, fingerprint, state, created_at)
         values (?, ?, ?, 'in_progress', ?) on conflict (environment_id, key) do nothing returning id`,
        [tenant.environmentId, key, fingerprint, this.clock.now()],
      );
      if (inserted.length === 1) {
        const id = inserted[0]!.id;
        let result: { status: number; body: string };
        try {
          result = await work();
        } catch (err) {
          await conn.execute('delete from idempotency_key where id = ?', [id]); // a fault: let the client retry
          throw err;
        }
        if (!isStored(result.status)) {
          await conn.execute('delete from idempotency_key where id = ?', [id]);
        } else {
          await conn.execute(`update idempotency_key set state = 'completed', response_status = ?, response_body = ? where id = ?`, [
            result.status,
            result.body,
            id,
          ]);
        }
        return { ...result, replayed: false };
      }

      const rows: Array<{ id: string; fingerprint: string; state: string; response_status: number | null; response_body: string | null; created_at: Date }> =
        await conn.execute(
          'select id, fingerprint, state, response_status, response_body, created_at from idempotency_key where environment_id = ? and key = ?',
          [tenant.environmentId, key],
        );
      const row = rows[0];
      if (!row) continue; // deleted between our insert and select: try again
      const age = this.clock.now().getTime() - new Date(row.created_at).getTime();
      if (age > RETENTION_MS || (row.state === 'in_progress' && age > ABANDONED_MS)) {
        await conn.execute('delete from idempotency_key where id = ? and created_at = ?', [row.id, row.created_at]);
        continue;
      }
      if (row.fingerprint !== fingerprint) {
        throw new DomainError('conflict', 'This Idempotency-Key was already used with a different request.', '422');
      }
      if (row.state === 'completed') {
        return { status: row.response_status!, body: row.response_body!, replayed: true };
      }
      if (Date.now() >= deadline) {
        throw new DomainError('conflict', 'A request with this Idempotency-Key is still being processed; retry later.', '409');
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
