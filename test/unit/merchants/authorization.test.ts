import { ACTION_CLASSES, type ActionClass } from '../../../src/merchants/action-class';
import {
  actionsOf,
  authorize,
  authorizeMemberReach,
  testModeOnly,
  LIVE_CREDENTIAL_REQUIRED,
  OWNER_REQUIRED,
  PRIVATE_KEY_REQUIRED,
  KEY_WITHOUT_EXPIRY_REQUIRED,
} from '../../../src/merchants/authorization';
import { MEMBER_ROLES, type MemberRole } from '../../../src/merchants/member-role';
import type { Tenant } from '../../../src/merchants/tenant';
import { DomainError } from '../../../src/shared/errors';

const base = { environmentId: 1, subsidiaryId: 1, mode: 'test' as const };
const member = (role: MemberRole, testOnly = false): Tenant => ({ ...base, member: { memberId: 7, email: 'a@b.test', role, testOnly } });
const privateKey: Tenant = { ...base, keyKind: 'private', keyId: 3, keyExpiresAt: null };
const graceKey: Tenant = { ...base, keyKind: 'private', keyId: 3, keyExpiresAt: Date.now() + 3600_000 };
const publicKey: Tenant = { ...base, keyKind: 'public', keyId: 4, keyExpiresAt: null };

/** What each role may do, written out as the team documentation states it (✓ = may). */
const EXPECTED: Record<MemberRole, Record<ActionClass, boolean>> = {
  OWNER: { client: true, read: true, 'links.write': true, 'payments.write': true, developers: true, secrets: true, members: true },
  ADMIN: { client: true, read: true, 'links.write': true, 'payments.write': true, developers: true, secrets: true, members: true },
  DEVELOPER: { client: true, read: true, 'links.write': false, 'payments.write': false, developers: true, secrets: false, members: false },
  SUPPORT: { client: true, read: true, 'links.write': true, 'payments.write': true, developers: false, secrets: false, members: false },
  VIEWER: { client: true, read: true, 'links.write': false, 'payments.write': false, developers: false, secrets: false, members: false },
};

function outcome(principal: Tenant, action: ActionClass, detail = {}): string {
  try {
    authorize(principal, action, detail);
    return 'allowed';
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).kind).toBe('forbidden');
    return (e as DomainError).message;
  }
}

describe('the one authorization check', () => {
  describe.each(MEMBER_ROLES)('a member with role %s', (role) => {
    it.each(ACTION_CLASSES)('%s: allowed exactly as the permission table says, refused as forbidden otherwise', (action) => {
      const result = outcome(member(role), action);
      if (EXPECTED[role][action]) expect(result).toBe('allowed');
      else expect(result).toBe(`Your role (${role}) does not allow this operation.`);
      // A member may also do what "manages" the merchant when the role allows the class.
      expect(outcome(member(role), action, { manages: true }) === 'allowed').toBe(EXPECTED[role][action]);
    });
  });

  it.each(MEMBER_ROLES)('lists for %s exactly the action classes the table allows, the ones the dashboard shows', (role) => {
    const allowed = ACTION_CLASSES.filter((action) => EXPECTED[role][action]);
    expect(actionsOf(role)).toEqual(allowed);
    for (const action of actionsOf(role)) expect(outcome(member(role), action)).toBe('allowed');
  });

  it('only an owner may act on an owner: ADMIN manages members, but not owners', () => {
    expect(outcome(member('OWNER'), 'members', { concernsOwner: true })).toBe('allowed');
    expect(outcome(member('ADMIN'), 'members', { concernsOwner: true })).toBe(OWNER_REQUIRED);
    expect(outcome(member('ADMIN'), 'members')).toBe('allowed');
    expect(outcome(privateKey, 'members', { concernsOwner: true })).toBe('allowed');
  });

  it.each(ACTION_CLASSES)('the private key acts as an owner: %s', (action) => {
    expect(outcome(privateKey, action)).toBe('allowed');
    expect(outcome(privateKey, action, { manages: true, concernsOwner: true })).toBe('allowed');
  });

  it.each(ACTION_CLASSES)('the public key may do client actions only: %s', (action) => {
    expect(outcome(publicKey, action)).toBe(action === 'client' ? 'allowed' : PRIVATE_KEY_REQUIRED);
  });

  it.each(ACTION_CLASSES)('a private key in its grace period makes calls but manages nothing: %s', (action) => {
    const managesAlways = action === 'secrets' || action === 'members';
    expect(outcome(graceKey, action)).toBe(managesAlways ? KEY_WITHOUT_EXPIRY_REQUIRED : 'allowed');
    expect(outcome(graceKey, action, { manages: true })).toBe(KEY_WITHOUT_EXPIRY_REQUIRED);
  });

  it('a tenant the service acts as itself (a hosted payment page, no key row) is a public client', () => {
    const hosted: Tenant = { ...base, keyKind: 'public' };
    expect(outcome(hosted, 'client')).toBe('allowed');
    expect(outcome(hosted, 'read')).toBe(PRIVATE_KEY_REQUIRED);
  });

  it('a test key and a test-only member act in test mode: they reach test-only members, never one who works in live', () => {
    const liveKey: Tenant = { ...privateKey, mode: 'live' };
    expect(testModeOnly(privateKey)).toBe(true);
    expect(testModeOnly(liveKey)).toBe(false);
    expect(testModeOnly(member('OWNER', true))).toBe(true);
    // A member's reach is theirs, whichever environment their request is in.
    expect(testModeOnly({ ...member('OWNER'), mode: 'test' })).toBe(false);
    expect(testModeOnly({ ...member('OWNER'), mode: 'live' })).toBe(false);
    // A member principal whose reach is not known is held to test.
    expect(testModeOnly({ ...base, member: { memberId: 7, email: 'a@b.test', role: 'OWNER' } as never })).toBe(true);

    for (const caller of [privateKey, member('ADMIN', true)]) {
      expect(() => authorizeMemberReach(caller, true)).not.toThrow();
      expect(() => authorizeMemberReach(caller, false)).toThrow(LIVE_CREDENTIAL_REQUIRED);
    }
    for (const caller of [liveKey, member('ADMIN')]) {
      expect(() => authorizeMemberReach(caller, false)).not.toThrow();
      expect(() => authorizeMemberReach(caller, true)).not.toThrow();
    }
  });
});
