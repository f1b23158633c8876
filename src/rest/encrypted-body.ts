import type { FastifyRequest } from 'fastify';
import type { AppServices } from '../app-context';
import { DomainError } from '../shared/errors';
import { tenantOf } from './authentication';

export const ENCRYPTED_DATA_MISSING = 'Unable to find the encrypted data, please encrypt your payload and try again';

/** Reads `{ "data": "<encrypted>" }` and returns the decrypted plaintext object. */
export async function readEncryptedBody(request: FastifyRequest, services: AppServices): Promise<Record<string, unknown>> {
  const body = request.body;
  const data =
    body !== null && typeof body === 'object' && !Array.isArray(body)
      ? Object.entries(body as Record<string, unknown>).find(([k]) => k.toLowerCase() === 'data')?.[1]
      : undefined;
  if (typeof data !== 'string' || data.length === 0) throw new DomainError('validation', ENCRYPTED_DATA_MISSING, '400');
  return services.payloads.decrypt(tenantOf(request), data);
}
