import { guardedField } from '../../../src/graphql/auth-checker';
import type { GraphqlContext } from '../../../src/graphql/context';
import type { Tenant } from '../../../src/merchants/tenant';
import { DomainError } from '../../../src/shared/errors';

const tenantOf = (keyKind: 'public' | 'private'): Tenant => ({ environmentId: 1, subsidiaryId: 1, mode: 'test', keyKind });

/** The context's tenant part: `known` once resolved, `pending` what tenant() answers. */
function contextWith(known: Tenant | undefined, pending: Promise<Tenant>): GraphqlContext {
  return { knownTenant: () => known, tenant: () => pending } as unknown as GraphqlContext;
}

describe('guardedField', () => {
  it('answers the value itself, not a promise, once the tenant is known and holds the permission', () => {
    const value = guardedField(contextWith(tenantOf('private'), new Promise(() => undefined)), 'read', () => ({ emailAddress: 'a@b.test' }));
    expect(value).toEqual({ emailAddress: 'a@b.test' });
  });

  it('refuses a known public key as `@Authorized` refuses it (forbidden), without reading the value', () => {
    const read = jest.fn(() => 'secret');
    let refused: unknown;
    try {
      void guardedField(contextWith(tenantOf('public'), new Promise(() => undefined)), 'read', read);
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).kind).toBe('forbidden');
    expect(read).not.toHaveBeenCalled();
  });

  it('waits for the tenant when it is not known yet, and decides the same way', async () => {
    await expect(guardedField(contextWith(undefined, Promise.resolve(tenantOf('private'))), 'read', () => 7)).resolves.toBe(7);
    await expect(guardedField(contextWith(undefined, Promise.resolve(tenantOf('public'))), 'read', () => 7)).rejects.toMatchObject({ kind: 'forbidden' });
    const unauthenticated = new DomainError('unauthenticated', 'A valid api-key header is required.', 'UNAUTHENTICATED');
    await expect(guardedField(contextWith(undefined, Promise.reject(unauthenticated)), 'read', () => 7)).rejects.toBe(unauthenticated);
  });
});
