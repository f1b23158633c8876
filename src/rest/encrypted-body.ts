import type { FastifyRequest } from 'fastify';
import type { AppServices } from '../app-context';
import { DomainError } from '../shared/errors';
import { readInput } from '../shared/input';
import { tenantOf } from './authentication';
import { EncryptedBody } from './schemas';

export const ENCRYPTED_DATA_MISSING = 'Unable to find the encrypted data, please encrypt your payload and try again';

/** Reads `{ "data": "<encrypted>" }` (by its schema, `Data` as well) and returns the decrypted plaintext object. */
export async function readEncryptedBody(request: FastifyRequest, services: AppServices): Promise<Record<string, unknown>> {
  let data: string;
  try {
    data = readInput(EncryptedBody, request.body).data;
  } catch (err) {
    if (err instanceof DomainError) throw new DomainError('validation', ENCRYPTED_DATA_MISSING, '400');
    throw err;
  }
  return services.payloads.decrypt(tenantOf(request), data);
}
