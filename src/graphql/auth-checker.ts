import type { AuthChecker } from 'type-graphql';
import { DomainError } from '../shared/errors';
import { requirePrivateKey } from '../merchants/key-authority';
import type { GraphqlContext } from './context';

/** Roles of `@Authorized(...)`: TENANT (any api-key), PRIVATE_KEY, ADMIN (x-admin-token). */
export type Role = 'TENANT' | 'PRIVATE_KEY' | 'ADMIN';

export const authChecker: AuthChecker<GraphqlContext, Role> = async ({ context }, roles) => {
  if (roles.includes('ADMIN')) {
    if (!context.isAdmin) throw new DomainError('unauthenticated', 'A valid x-admin-token header is required.', 'UNAUTHENTICATED');
    return true;
  }
  const tenant = await context.tenant();
  if (roles.includes('PRIVATE_KEY')) requirePrivateKey(tenant);
  return true;
};
