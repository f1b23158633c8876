import type { EntityManager } from '@mikro-orm/postgresql';
import { forbidden } from '../shared/errors';
import type { Tenant } from './tenant';

export const PRIVATE_KEY_REQUIRED = 'This operation requires the private key.';
export const KEY_WITHOUT_EXPIRY_REQUIRED =
  'This operation requires a private key without an expiry: a key in the grace period of a rotation still makes calls but manages nothing.';

/**
 * Operations only a server may do (they would let a browser's or app's key, which anyone can
 * read from the page, change what customers are charged or where they are sent): creating,
 * editing, activating and disabling payment links, verifying orders, revenue figures.
 */
export function requirePrivateKey(tenant: Tenant): void {
  if (tenant.keyKind !== 'private') throw forbidden(PRIVATE_KEY_REQUIRED);
}

/**
 * Who may manage a merchant environment (rotate its keys or webhook signing secret, set its
 * webhook URL, change its settings, sign in to the dashboard): the holder of a private key that
 * has no expiry. A key replaced with a grace period keeps working for calls until it expires,
 * but whoever still holds it (perhaps the one it leaked to) must not be able to replace the
 * merchant's new key or secret.
 */
export function requireManagingKey(tenant: Tenant): void {
  requirePrivateKey(tenant);
  if (tenant.keyId === undefined || tenant.keyExpiresAt !== null) throw forbidden(KEY_WITHOUT_EXPIRY_REQUIRED);
}

/**
 * The same decision taken again inside the managing transaction, on the key's row as it is
 * now: the environment row is locked first (rotations lock it too), so a rotation that gave the
 * key an expiry has either committed (and is seen here) or waits until this transaction ends.
 */
export async function lockManagingKey(em: EntityManager, tenant: Tenant): Promise<void> {
  requireManagingKey(tenant);
  const rows: { expires_at: Date | null }[] = await em.getConnection().execute(
    `select k.expires_at
       from app_environment e join api_key k on k.environment_id = e.id
      where e.id = ? and k.id = ? and k.kind = 'private'
      for update of e`,
    [tenant.environmentId, tenant.keyId],
    'all',
    em.getTransactionContext(),
  );
  if (!rows[0] || rows[0].expires_at !== null) throw forbidden(KEY_WITHOUT_EXPIRY_REQUIRED);
}
