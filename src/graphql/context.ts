import type { FastifyRequest } from 'fastify';
import { adminTokenMatches } from '../operations/admin-token';
import { countPasswordResetRequest } from '../protection';
import type { AppContext, AppServices } from '../app-context';
import { callerOf, type Tenant } from '../merchants/tenant';
import type { SessionCredentials } from '../merchants/dashboard-session.service';

/** Where a request's faults are logged (Fastify's request logger: every line carries the request id). */
export interface RequestLog {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface GraphqlContext {
  services: AppServices;
  /** The id of the HTTP request (for WebSocket: of the upgrade request), as in x-request-id. */
  requestId: string;
  log: RequestLog;
  /** Resolves (once) the tenant of the api-key; throws `unauthenticated` without a valid key. */
  tenant(): Promise<Tenant>;
  /** The tenant once `tenant()` has resolved (undefined before, or when it failed): lets a field check a permission without a promise. */
  knownTenant(): Tenant | undefined;
  /**
   * Called when a mutation has run: its caller (if the operation authenticated one) reads its
   * lists from the primary for a while, so that they show what it wrote (src/db/read-routing.ts);
   * resolves once every instance would know it (REDIS_URL).
   */
  wrote(): Promise<void>;
  isAdmin: boolean;
  /** The address of the client (of the upgrade request, for WebSocket), as the audit log records it. */
  ip?: string;
  publicUrl: string;
  /** Counts a request for a password-reset email against the client IP and the email: seconds to wait when over a limit. */
  countPasswordResetRequest(email: string): Promise<number | undefined>;
}

export function createGraphqlContext(
  app: AppContext,
  headers: { apiKey?: string; adminToken?: string; session?: SessionCredentials },
  request: FastifyRequest,
): GraphqlContext {
  let tenant: Promise<Tenant> | undefined;
  let known: Tenant | undefined;
  let caller: string | undefined;
  return {
    services: app.services,
    requestId: request.id,
    log: request.log,
    // A dashboard session cookie authenticates only a request without an api-key.
    // The tenant carries the request's address, for the audit log of the changes it makes.
    tenant: () =>
      (tenant ??= (
        headers.apiKey === undefined && headers.session
          ? app.services.dashboardSessions.authenticate(headers.session)
          : app.services.auth.authenticate(headers.apiKey)
      ).then((found) => {
        caller = callerOf(found);
        return (known = { ...found, ip: request.ip });
      })),
    knownTenant: () => known,
    wrote: () => app.services.reads.wrote(caller),
    isAdmin: adminTokenMatches(app.config.adminToken, headers.adminToken),
    ip: request.ip,
    publicUrl: app.config.publicUrl,
    countPasswordResetRequest: (email) => countPasswordResetRequest(request, email),
  };
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
