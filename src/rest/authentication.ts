import type { FastifyRequest } from 'fastify';
import type { AppServices } from '../app-context';
import { callerOf, type Tenant } from '../merchants/tenant';

declare module 'fastify' {
  interface FastifyRequest {
    tenant?: Tenant;
  }
}

/**
 * onRequest hook of the shim: every endpoint needs an api-key; the tenant rides on the request.
 * The rate limiter may have authenticated the same header already for this request (the first
 * use of a key in its window); then the tenant is there and the key is not looked up twice.
 */
export function authenticateRequest(services: AppServices) {
  return async (request: FastifyRequest): Promise<void> => {
    if (request.tenant) return;
    const header = request.headers['api-key'];
    request.tenant = await services.auth.authenticate(Array.isArray(header) ? header[0] : header);
  };
}

/** The request's tenant, with the request's address (what the audit log records as the change's origin). */
export function tenantOf(request: FastifyRequest): Tenant {
  if (!request.tenant) throw new Error('route registered without authentication');
  return { ...request.tenant, ip: request.ip };
}

/**
 * onSend hook of the shim: a request that may have written (any method but GET) sends its
 * caller's next list reads to the primary for a while, so they see the write (src/db/read-routing.ts).
 * Marked before the answer leaves: the caller's next request cannot overtake it.
 */
export function rememberWriters(services: AppServices) {
  return async (request: FastifyRequest): Promise<void> => {
    if (request.tenant && request.method !== 'GET') await services.reads.wrote(callerOf(request.tenant));
  };
}
