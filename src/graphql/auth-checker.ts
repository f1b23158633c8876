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

/**
 * A field guarded by `role`, decided as `@Authorized(role)` decides it (the same `authorize`,
 * the same errors at the same path), but without a promise when the request's tenant is
 * already known, which it is under every root field that is itself `@Authorized`: type-graphql's
 * `@Authorized` on a field runs an async middleware chain for each object, so a list of 50
 * orders asking for `customer` made 50 of them, and made graphql-js complete every row
 * asynchronously.
 */
export function guardedField<T>(context: GraphqlContext, role: ActionClass, value: () => T): T | Promise<T> {
  const tenant = context.knownTenant();
  if (tenant) {
    authorize(tenant, role);
    return value();
  }
  return context.tenant().then((found) => {
    authorize(found, role);
    return value();
  });
}
