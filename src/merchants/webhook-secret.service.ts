import { randomBytes } from 'node:crypto';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { SecretBox } from '../crypto/secret-box';
import type { Clock } from '../shared/clock';
import { notFound, validationError } from '../shared/errors';
import type { EnvironmentMode } from './app-environment.entity';
import { authorize, lockAuthorized } from './authorization';
import type { Tenant } from './tenant';
import { AuditActions, type AuditService } from './audit/audit.service';

/** Longest overlap during which a replaced signing secret still signs (as long as a key's grace). */
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 24 * 3600;

/**
 * Where each environment's signing secret is kept: sealed on the merchant's row, with the secret
 * a rotation replaced in a table of its own while it still signs. The live secret is the one
 * merchants had when one secret signed both environments; the test one came later.
 */
export const SIGNING_SECRET_STORE = {
  live: {
    column: 'webhook_secret_sealed',
    previousTable: 'webhook_secret_previous',
    context: (subsidiaryId: number) => `subsidiary:${subsidiaryId}:webhook-secret`,
  },
  test: {
    column: 'test_webhook_secret_sealed',
    previousTable: 'test_webhook_secret_previous',
    context: (subsidiaryId: number) => `subsidiary:${subsidiaryId}:test-webhook-secret`,
  },
} as const satisfies Record<EnvironmentMode, { column: string; previousTable: string; context: (id: number) => string }>;

/** A new Standard Webhooks secret: `whsec_` and 24 random bytes in base64. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

/**
 * The webhook signing secrets, one per environment: a test key holder can neither obtain nor
 * replace what authenticates live notifications, and an event signed for the test environment
 * does not verify against the live secret. A merchant created before environments had their own
 * secret has none for test until it is first needed (a delivery or a rotation); it is made
 * then, since only the service holds the master key that seals it.
 */
export class WebhookSecretService {
  constructor(
    private readonly orm: MikroORM,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  /** The environment's current signing secret, unsealed (made now if the test one does not exist yet). */
  async current(subsidiaryId: number, mode: EnvironmentMode): Promise<string> {
    const store = SIGNING_SECRET_STORE[mode];
    const [row] = await this.sql<{ sealed: string | null }>(this.orm.em, `select "${store.column}" as sealed from subsidiary where id = ?`, [subsidiaryId]);
    if (!row) throw notFound('merchant not found', '13');
    if (row.sealed !== null) return this.box.open(row.sealed, store.context(subsidiaryId));
    return this.orm.em.fork().transactional(async (em) => {
      const sealed = await this.lockedCurrent(em, subsidiaryId, mode);
      if (sealed !== null) return this.box.open(sealed, store.context(subsidiaryId));
      const secret = newWebhookSecret();
      await this.sql(em, `update subsidiary set "${store.column}" = ? where id = ?`, [this.box.seal(secret, store.context(subsidiaryId)), subsidiaryId]);
      return secret;
    });
  }

  /**
   * The secrets a delivery of the environment is signed with now: the current one, and during
   * the overlap of a rotation the replaced one too (receivers accept any of the signatures).
   */
  async signing(subsidiaryId: number, mode: EnvironmentMode): Promise<string[]> {
    const store = SIGNING_SECRET_STORE[mode];
    const current = await this.current(subsidiaryId, mode);
    const previous = await this.sql<{ secret_sealed: string }>(
      this.orm.em,
      `select secret_sealed from "${store.previousTable}" where subsidiary_id = ? and expires_at > ?`,
      [subsidiaryId, this.clock.now()],
    );
    return previous[0] ? [current, this.box.open(previous[0].secret_sealed, store.context(subsidiaryId))] : [current];
  }

  /**
   * Replaces the signing secret of the calling key's environment (a private key without an
   * expiry). For `overlapSeconds` (0 to 7 days) deliveries carry signatures under both the old
   * and the new secret, so a receiver can switch without rejecting any. The new secret is
   * returned once.
   */
  async rotate(tenant: Tenant, overlapSeconds = 0): Promise<{ webhookSecret: string; previousSecretExpiresAt: Date }> {
    authorize(tenant, 'secrets');
    if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_SECRET_OVERLAP_SECONDS) {
      throw validationError(`The overlap must be a whole number of seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS}.`);
    }
    const store = SIGNING_SECRET_STORE[tenant.mode];
    const expiresAt = new Date(this.clock.now().getTime() + overlapSeconds * 1000);
    const webhookSecret = newWebhookSecret();
    await this.orm.em.fork().transactional(async (em) => {
      await lockAuthorized(em, tenant, 'secrets');
      const replaced = await this.lockedCurrent(em, tenant.subsidiaryId, tenant.mode);
      if (replaced !== null) {
        await this.sql(
          em,
          `insert into "${store.previousTable}" (subsidiary_id, secret_sealed, expires_at) values (?, ?, ?)
           on conflict (subsidiary_id) do update set secret_sealed = excluded.secret_sealed, expires_at = excluded.expires_at`,
          [tenant.subsidiaryId, replaced, expiresAt],
        );
      }
      await this.sql(em, `update subsidiary set "${store.column}" = ? where id = ?`, [
        this.box.seal(webhookSecret, store.context(tenant.subsidiaryId)),
        tenant.subsidiaryId,
      ]);
      await this.audit.recordFor(em, tenant, AuditActions.webhookSecretRotated, `signing secret (overlap ${overlapSeconds} s)`);
    });
    return { webhookSecret, previousSecretExpiresAt: expiresAt };
  }

  /** The sealed current secret, the merchant's row locked (one change of its secrets at a time). */
  private async lockedCurrent(em: EntityManager, subsidiaryId: number, mode: EnvironmentMode): Promise<string | null> {
    const [row] = await this.sql<{ sealed: string | null }>(
      em,
      `select "${SIGNING_SECRET_STORE[mode].column}" as sealed from subsidiary where id = ? for update`,
      [subsidiaryId],
    );
    if (!row) throw notFound('merchant not found', '13');
    return row.sealed;
  }

  private sql<T>(em: EntityManager, query: string, params: unknown[]): Promise<T[]> {
    return em.getConnection().execute(query, params, 'all', em.isInTransaction() ? em.getTransactionContext() : undefined);
  }
}
