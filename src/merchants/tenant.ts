import type { ApiKeyKind } from './api-key.entity';
import type { EnvironmentMode } from './app-environment.entity';
import type { MemberPrincipal } from './member-role';

/**
 * Who is calling, as resolved from the api-key (or a member's sign-in). Every domain operation on tenant data takes
 * one and filters by `environmentId` (which belongs to exactly one merchant), so a key never
 * reaches another merchant's rows nor the other environment's.
 */
export interface Tenant {
  environmentId: number;
  subsidiaryId: number;
  mode: EnvironmentMode;
  /** The kind of api-key presented; absent when a member acts (see `member`). */
  keyKind?: ApiKeyKind;
  /**
   * The api-key row the caller presented; absent when a member acts (a dashboard session) and for
   * a tenant the service acts as itself (a hosted payment page).
   */
  keyId?: number;
  /** When that key (or the member's dashboard session) stops working (epoch ms), as known at authentication; null: no expiry. */
  keyExpiresAt?: number | null;
  /** That key's hint (its visible part, never the key), naming it in the audit log. */
  keyHint?: string;
  /** The address of the request acting as this tenant, when the interface knows it (the audit log records it). */
  ip?: string;
  /** The member acting, when a person (not an api-key) calls; their role decides what they may do. */
  member?: MemberPrincipal;
}

/**
 * The caller a tenant stands for, as the read routing remembers writers (src/db/read-routing.ts):
 * the member acting, else the api-key presented; undefined for the service acting as itself.
 */
export function callerOf(tenant: Tenant): string | undefined {
  if (tenant.member) return `member:${tenant.member.memberId}`;
  if (tenant.keyId !== undefined) return `key:${tenant.keyId}`;
  return undefined;
}
