import { createHash, timingSafeEqual } from 'node:crypto';
import type { AppContext, AppServices } from '../app-context';
import type { Tenant } from '../merchants/tenant';

export interface GraphqlContext {
  services: AppServices;
  /** Resolves (once) the tenant of the api-key; throws `unauthenticated` without a valid key. */
  tenant(): Promise<Tenant>;
  isAdmin: boolean;
  publicUrl: string;
}

export function createGraphqlContext(
  app: AppContext,
  headers: { apiKey?: string; adminToken?: string },
): GraphqlContext {
  let tenant: Promise<Tenant> | undefined;
  return {
    services: app.services,
    tenant: () => (tenant ??= app.services.auth.authenticate(headers.apiKey)),
    isAdmin: isAdminToken(app.config.adminToken, headers.adminToken),
    publicUrl: app.config.publicUrl,
  };
}

/** Constant-time comparison of the x-admin-token header with ADMIN_TOKEN (disabled when unset). */
function isAdminToken(expected: string | undefined, given: string | undefined): boolean {
  if (!expected || !given) return false;
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
