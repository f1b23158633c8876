import type { EntityManager } from '@mikro-orm/postgresql';
import { forbidden } from '../shared/errors';
import type { MemberPrincipal, MemberRole } from './member-role';
import type { Tenant } from './tenant';
import { ACTION_CLASSES, type ActionClass } from './action-class';

/**
 * The one place that decides who may do what for a merchant. Every interface (GraphQL over HTTP
 * and WebSocket, REST, the dashboard, the CLI through the services) reaches it through the
 * domain services or the GraphQL guard; nothing else looks at key kinds or roles.
 *
 * What each action class covers is described in `action-class.ts`.
 */

/** Who holds a permission: a member's role, or the public key (a private key acts as an OWNER). */
export type Holder = MemberRole | 'PUBLIC_KEY';

/** The permission table: for each action class, who may do it. */
export const PERMISSIONS: Readonly<Record<ActionClass, readonly Holder[]>> = Object.freeze({
  client: ['OWNER', 'ADMIN', 'DEVELOPER', 'SUPPORT', 'VIEWER', 'PUBLIC_KEY'],
  read: ['OWNER', 'ADMIN', 'DEVELOPER', 'SUPPORT', 'VIEWER'],
  'links.write': ['OWNER', 'ADMIN', 'SUPPORT'],
  'payments.write': ['OWNER', 'ADMIN', 'SUPPORT'],
  developers: ['OWNER', 'ADMIN', 'DEVELOPER'],
  secrets: ['OWNER', 'ADMIN'],
  members: ['OWNER', 'ADMIN'],
});

/**
 * Classes whose every action changes who or what controls the merchant (credentials, settings,
 * the team): a private key in the grace period of a rotation may not do them.
 */
const MANAGING_CLASSES: readonly ActionClass[] = ['secrets', 'members'];

export interface ActionDetail {
  /**
   * The action changes who or what controls the environment (a key, the webhook URL): a key in
   * the grace period of a rotation still makes calls but manages nothing. Always true for the
   * `secrets` and `members` classes.
   */
  manages?: boolean;
  /** The action makes, changes or removes an owner: only an owner (or the private key) may. */
  concernsOwner?: boolean;
}

export const PRIVATE_KEY_REQUIRED = 'This operation requires the private key.';
export const KEY_WITHOUT_EXPIRY_REQUIRED =
  'This operation requires a private key without an expiry: a key in the grace period of a rotation still makes calls but manages nothing.';
export const OWNER_REQUIRED = 'Only an owner may make, change or remove an owner.';
export const LIVE_CREDENTIAL_REQUIRED =
  'This member works in live too: only the live private key, or a member who works in live, may change them or reset their password.';
export const roleRefused = (role: MemberRole): string => `Your role (${role}) does not allow this operation.`;

/** Whose permissions the caller has: a member's role, OWNER for a private key, else the public key's. */
export function holderOf(principal: Tenant): Holder {
  if (principal.member) return principal.member.role;
  return principal.keyKind === 'private' ? 'OWNER' : 'PUBLIC_KEY';
}

/** True when the permission table lets `holder` do actions of `action`. */
export function mayDo(holder: Holder, action: ActionClass): boolean {
  // An action class the table does not know is refused, never an error.
  return PERMISSIONS[action]?.includes(holder) ?? false;
}

/**
 * The action classes the permission table lets `holder` do, in table order: what an interface
 * shows a member (the dashboard hides what is not listed; the services refuse it anyway).
 */
export function actionsOf(holder: Holder): ActionClass[] {
  return ACTION_CLASSES.filter((action) => mayDo(holder, action));
}

/**
 * Throws `forbidden` unless the caller may do an action of the class. A private key acts as an
 * OWNER, but one with an expiry (replaced with a grace period) manages nothing; the public key
 * may do client actions only (anything more needs the private key).
 */
export function authorize(principal: Tenant, action: ActionClass, detail: ActionDetail = {}): void {
  const holder = holderOf(principal);
  if (!mayDo(holder, action)) throw forbidden(principal.member ? roleRefused(principal.member.role) : PRIVATE_KEY_REQUIRED);
  if (detail.concernsOwner && holder !== 'OWNER') throw forbidden(OWNER_REQUIRED);
  const manages = detail.manages || MANAGING_CLASSES.includes(action);
  if (manages && !principal.member && (principal.keyId === undefined || principal.keyExpiresAt !== null)) {
    throw forbidden(KEY_WITHOUT_EXPIRY_REQUIRED);
  }
}

/**
 * A credential that acts in test mode only: a test private key, or a member who works in the test
 * environment only. The team is the whole merchant's, so such a credential makes only test-only
 * members and changes, removes or resets only them: a test key (usually in more hands than the
 * live one) never makes or takes over anyone who reaches live money.
 */
export function testModeOnly(principal: Tenant): boolean {
  // Fails closed: a member principal whose reach is unknown is treated as test-only.
  return principal.member ? principal.member.testOnly !== false : principal.mode === 'test';
}

/** Throws `forbidden` unless `principal` may act on a member who works in live (`targetTestOnly` false). */
export function authorizeMemberReach(principal: Tenant, targetTestOnly: boolean): void {
  if (!targetTestOnly && testModeOnly(principal)) throw forbidden(LIVE_CREDENTIAL_REQUIRED);
}

/**
 * The same decision taken again inside the changing transaction, on the caller as it is now:
 * the environment row is locked first (rotations lock it too), so a rotation that gave the key
 * an expiry has either committed (and is seen here) or waits until this transaction ends.
 */
export async function lockAuthorized(em: EntityManager, principal: Tenant, action: ActionClass, detail: ActionDetail = {}): Promise<void> {
  authorize(principal, action, detail);
  const execute = <T>(sql: string, params: unknown[]): Promise<T[]> => em.getConnection().execute(sql, params, 'all', em.getTransactionContext());
  await execute(`select id from app_environment where id = ? for update`, [principal.environmentId]);
  if (principal.member) return authorize(await currentMember(em, principal), action, detail);
  if (!(detail.manages || MANAGING_CLASSES.includes(action))) return;
  const rows = await execute<{ expires_at: Date | null }>(`select expires_at from api_key where id = ? and environment_id = ? and kind = 'private'`, [
    principal.keyId,
    principal.environmentId,
  ]);
  if (!rows[0] || rows[0].expires_at !== null) throw forbidden(KEY_WITHOUT_EXPIRY_REQUIRED);
}

export const MEMBER_GONE = 'You are no longer a member of this merchant.';
export const MEMBER_SESSION_REQUIRED = "This operation is on a member's own account: sign in to the dashboard as that member (an api-key has no account).";

/**
 * A member's own account (their second factor): only the member, signed in as themself, acts on
 * it, whatever their role; no api-key does (a key is nobody's account).
 */
export function authorizeOwnAccount(principal: Tenant): MemberPrincipal {
  if (!principal.member) throw forbidden(MEMBER_SESSION_REQUIRED);
  return principal.member;
}

/**
 * A member principal as the database knows it now, inside the caller's transaction: a role
 * changed since sign-in counts, a removed member may do nothing. Other principals as they are.
 */
export async function currentMember(em: EntityManager, principal: Tenant): Promise<Tenant> {
  if (!principal.member) return principal;
  const rows: { role: MemberRole; test_only: boolean }[] = await em
    .getConnection()
    .execute(
      `select role, test_only from merchant_member where id = ? and subsidiary_id = ?`,
      [principal.member.memberId, principal.subsidiaryId],
      'all',
      em.getTransactionContext(),
    );
  if (!rows[0]) throw forbidden(MEMBER_GONE);
  return { ...principal, member: { ...principal.member, role: rows[0].role, testOnly: rows[0].test_only } };
}
