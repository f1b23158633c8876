import type { AuthChecker } from 'type-graphql';
import { DomainError } from '../shared/errors';
import { authorize } from '../merchants/authorization';
import type { ActionClass } from '../merchants/action-class';
import type { GraphqlContext } from './context';

/**
 * Roles of `@Authorized(...)`: an action class of the merchants' permission table (decided by
 * `authorize`, the one check), or ADMIN (x-admin-token). Services check again where they change
 * something, so every interface is held to the same table.
 */
export type Role = ActionClass | 'ADMIN';

export const authChecker: AuthChecker<GraphqlContext, Role> = async ({ context }, roles) => {
  if (roles.includes('ADMIN')) {
    if (!context.isAdmin) throw new DomainError('unauthenticated', 'A valid x-admin-token header is required.', 'UNAUTHENTICATED');
    return true;
  }
  const tenant = await context.tenant();
  for (const role of roles) authorize(tenant, role as ActionClass);
  return true;
};
