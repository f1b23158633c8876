import 'reflect-metadata';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { ManualClock } from '../../../src/shared/clock';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import type { Tenant } from '../../../src/merchants/tenant';
import type { MemberRole } from '../../../src/merchants/member-role';
import type { ActionClass } from '../../../src/merchants/action-class';
import { verifyPassword } from '../../../src/merchants/password';
import type { DomainError } from '../../../src/shared/errors';

const PASSWORD = 'correct horse battery';
const INVITE = `mutation ($input: InviteMemberInput!) { inviteMember(input: $input) { email role invitationUrl expiresAt } }`;
const ACCEPT = `mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { email role createdAt } }`;
const CHANGE = `mutation ($input: ChangeMemberRoleInput!) { changeMemberRole(input: $input) { email role } }`;
const REMOVE = `mutation ($email: String!) { removeMember(email: $email) }`;
const MEMBERS = `{ members { email role createdAt } }`;

describe('team members, invitations and roles', () => {
  let t: TestService;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock(new Date());
    t = await startTestService({}, { clock });
  });
  afterAll(async () => t.close());

  const services = () => t.service.runtime.ctx.services;
  const gql = async (apiKey: string | undefined, query: string, variables: Record<string, unknown> = {}) =>
    (await request(t.baseUrl, 'POST', '/graphql', { apiKey, body: { query, variables } })).body;
  const tokenOf = (invitationUrl: string) => invitationUrl.split('/').pop()!;

  async function invite(m: CreatedMerchant, email: string, role: MemberRole) {
    const r = await gql(m.keys.test.privateKey, INVITE, { input: { email, role } });
    expect(r.errors).toBeUndefined();
    return r.data.inviteMember as { email: string; role: MemberRole; invitationUrl: string; expiresAt: string };
  }

  async function addMember(m: CreatedMerchant, email: string, role: MemberRole) {
    const invitation = await invite(m, email, role);
    const accepted = await gql(undefined, ACCEPT, { input: { token: tokenOf(invitation.invitationUrl), password: PASSWORD } });
    expect(accepted.errors).toBeUndefined();
    return accepted.data.acceptInvitation;
  }

  /** The member acting in the merchant's test environment, as a signed-in member would. */
  async function memberPrincipal(m: CreatedMerchant, email: string): Promise<Tenant> {
    const keyTenant = await services().auth.authenticate(m.keys.test.privateKey);
    const [row] = await t.service.runtime.ctx.orm.em
      .getConnection()
      .execute('select id, email, role from merchant_member where subsidiary_id = ? and email = ?', [m.subsidiary.id, email]);
    return {
      environmentId: keyTenant.environmentId,
      subsidiaryId: keyTenant.subsidiaryId,
      mode: keyTenant.mode,
      member: { memberId: row.id, email: row.email, role: row.role, testOnly: false },
    };
  }

  it('invites over GraphQL with the private key: the URL is under PUBLIC_URL, valid 72 hours, and accepting it (no key) makes the member', async () => {
    const m = await createTestMerchant(t);
    const invitation = await invite(m, 'Dev@Acme.test', 'DEVELOPER');
    expect(invitation.email).toBe('dev@acme.test');
    expect(invitation.role).toBe('DEVELOPER');
    expect(invitation.invitationUrl.startsWith(`${t.config.publicUrl}/dashboard/invitations/`)).toBe(true);
    expect(new Date(invitation.expiresAt).getTime()).toBe(clock.now().getTime() + 72 * 3600 * 1000);

    const accepted = await gql(undefined, ACCEPT, { input: { token: tokenOf(invitation.invitationUrl), password: PASSWORD } });
    expect(accepted.data.acceptInvitation).toMatchObject({ email: 'dev@acme.test', role: 'DEVELOPER' });
    expect((await gql(m.keys.test.privateKey, MEMBERS)).data.members).toEqual([{ email: 'dev@acme.test', role: 'DEVELOPER', createdAt: expect.any(String) }]);
    // The same merchant's live key sees the same team; another merchant's key does not.
    expect((await gql(m.keys.live.privateKey, MEMBERS)).data.members).toHaveLength(1);
    expect((await gql((await createTestMerchant(t)).keys.test.privateKey, MEMBERS)).data.members).toEqual([]);
  });

  it('records every team change in the audit log: invited and role changed by the key, joined by the member, removed', async () => {
    const m = await createTestMerchant(t);
    await addMember(m, 'ops@audit.test', 'VIEWER');
    expect((await gql(m.keys.test.privateKey, CHANGE, { input: { email: 'ops@audit.test', role: 'SUPPORT' } })).errors).toBeUndefined();
    // Giving the role a member already has changes nothing, and records nothing.
    expect((await gql(m.keys.test.privateKey, CHANGE, { input: { email: 'ops@audit.test', role: 'SUPPORT' } })).errors).toBeUndefined();
    expect((await gql(m.keys.test.privateKey, REMOVE, { email: 'ops@audit.test' })).data.removeMember).toBe(true);
    const entries: { action: string; actor_type: string; actor_label: string; target: string }[] = await t.service.runtime.ctx.orm.em
      .fork()
      .getConnection()
      .execute(`select action, actor_type, actor_label, target from audit_entry where subsidiary_id = ? and action like 'member.%' order by id`, [
        m.subsidiary.id,
      ]);
    const keyHint = entries[0]!.actor_label;
    expect(keyHint.startsWith('PGW-SECRETKEY-TEST-')).toBe(true);
    expect(keyHint).not.toBe(m.keys.test.privateKey);
    expect(entries).toEqual([
      { action: 'member.invited', actor_type: 'API_KEY', actor_label: keyHint, target: 'ops@audit.test as VIEWER' },
      { action: 'member.joined', actor_type: 'MEMBER', actor_label: 'ops@audit.test', target: 'ops@audit.test as VIEWER' },
      { action: 'member.role_changed', actor_type: 'API_KEY', actor_label: keyHint, target: 'ops@audit.test from VIEWER to SUPPORT' },
      { action: 'member.removed', actor_type: 'API_KEY', actor_label: keyHint, target: 'ops@audit.test (SUPPORT)' },
    ]);
  });

  it('stores only a salted scrypt hash of the password, which verifies in constant time', async () => {
    const m = await createTestMerchant(t);
    await addMember(m, 'a@hash.test', 'VIEWER');
    await addMember(m, 'b@hash.test', 'VIEWER');
    const rows: { password_hash: string }[] = await t.service.runtime.ctx.orm.em
      .getConnection()
      .execute('select password_hash from merchant_member where subsidiary_id = ? order by id', [m.subsidiary.id]);
    expect(rows.map((r) => r.password_hash.split('$')[0])).toEqual(['scrypt', 'scrypt']);
    expect(rows[0]!.password_hash).not.toBe(rows[1]!.password_hash);
    expect(rows[0]!.password_hash).not.toContain(PASSWORD);
    expect(await verifyPassword(PASSWORD, rows[0]!.password_hash)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}!`, rows[0]!.password_hash)).toBe(false);
  });

  it('an email is a member once per merchant, whatever its case', async () => {
    const m = await createTestMerchant(t);
    await addMember(m, 'ann@case.test', 'VIEWER');
    const again = await gql(m.keys.test.privateKey, INVITE, { input: { email: 'ANN@Case.test', role: 'ADMIN' } });
    expect(again.errors[0].extensions.code).toBe('ALREADY_MEMBER');
  });

  it('refuses a password under 12 characters, and the invitation still works afterwards', async () => {
    const m = await createTestMerchant(t);
    const { invitationUrl } = await invite(m, 'short@pw.test', 'VIEWER');
    const refused = await gql(undefined, ACCEPT, { input: { token: tokenOf(invitationUrl), password: '12345678901' } });
    expect(refused.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(refused.errors[0].message).toContain('at least 12 characters');
    const accepted = await gql(undefined, ACCEPT, { input: { token: tokenOf(invitationUrl), password: '123456789012' } });
    expect(accepted.data.acceptInvitation.email).toBe('short@pw.test');
  });

  it('an invitation is used once: a second acceptance, even at the same moment, is refused', async () => {
    const m = await createTestMerchant(t);
    const { invitationUrl } = await invite(m, 'once@inv.test', 'SUPPORT');
    const input = { token: tokenOf(invitationUrl), password: PASSWORD };
    const both = await Promise.all([gql(undefined, ACCEPT, { input }), gql(undefined, ACCEPT, { input })]);
    expect(both.filter((r) => r.data?.acceptInvitation).length).toBe(1);
    expect(both.filter((r) => r.errors?.[0]?.extensions.code === 'INVITATION_INVALID').length).toBe(1);
    expect((await gql(undefined, ACCEPT, { input })).errors[0].extensions.code).toBe('INVITATION_INVALID');
    expect((await gql(undefined, ACCEPT, { input: { token: 'not-a-token', password: PASSWORD } })).errors[0].extensions.code).toBe('INVITATION_INVALID');
  });

  it("an invitation expires 72 hours after it was made, by the service's clock", async () => {
    const m = await createTestMerchant(t);
    const early = await invite(m, 'early@exp.test', 'VIEWER');
    const late = await invite(m, 'late@exp.test', 'VIEWER');
    clock.advance(72 * 3600 * 1000 - 1000);
    expect((await gql(undefined, ACCEPT, { input: { token: tokenOf(early.invitationUrl), password: PASSWORD } })).data.acceptInvitation.email).toBe(
      'early@exp.test',
    );
    clock.advance(1000);
    const expired = await gql(undefined, ACCEPT, { input: { token: tokenOf(late.invitationUrl), password: PASSWORD } });
    expect(expired.errors[0].extensions.code).toBe('INVITATION_INVALID');
  });

  it('the public key and a private key in its grace period manage no members (FORBIDDEN)', async () => {
    const m = await createTestMerchant(t);
    const publicRefusal = await gql(m.keys.test.publicKey, INVITE, { input: { email: 'x@pub.test', role: 'VIEWER' } });
    expect(publicRefusal.errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql(m.keys.test.publicKey, MEMBERS)).errors[0].extensions.code).toBe('FORBIDDEN');
    const rotated = await gql(m.keys.test.privateKey, 'mutation { rotateKeys(input: { keys: [PRIVATE], graceSeconds: 3600 }) { privateKey } }');
    expect(rotated.errors).toBeUndefined();
    const graceRefusal = await gql(m.keys.test.privateKey, INVITE, { input: { email: 'x@grace.test', role: 'VIEWER' } });
    expect(graceRefusal.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(graceRefusal.errors[0].message).toContain('without an expiry');
  });

  it('the private key acts as an owner: it makes, demotes and removes owners, but never the last one', async () => {
    const m = await createTestMerchant(t);
    await addMember(m, 'one@own.test', 'OWNER');
    await addMember(m, 'two@own.test', 'ADMIN');
    const key = m.keys.test.privateKey;
    expect((await gql(key, REMOVE, { email: 'one@own.test' })).errors[0]).toMatchObject({
      extensions: { code: 'FORBIDDEN' },
      message: expect.stringContaining('one owner'),
    });
    expect((await gql(key, CHANGE, { input: { email: 'one@own.test', role: 'VIEWER' } })).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql(key, CHANGE, { input: { email: 'two@own.test', role: 'OWNER' } })).data.changeMemberRole).toEqual({
      email: 'two@own.test',
      role: 'OWNER',
    });
    expect((await gql(key, CHANGE, { input: { email: 'one@own.test', role: 'VIEWER' } })).data.changeMemberRole.role).toBe('VIEWER');
    expect((await gql(key, REMOVE, { email: 'two@own.test' })).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql(key, REMOVE, { email: 'one@own.test' })).data.removeMember).toBe(true);
    expect((await gql(key, MEMBERS)).data.members.map((x: { email: string }) => x.email)).toEqual(['two@own.test']);
    expect((await gql(key, REMOVE, { email: 'nobody@own.test' })).errors[0].extensions.code).toBe('MEMBER_NOT_FOUND');
  });

  it('two owners removed at the same moment: one removal succeeds, the other is refused, one owner is left', async () => {
    const m = await createTestMerchant(t);
    await addMember(m, 'a@race.test', 'OWNER');
    await addMember(m, 'b@race.test', 'OWNER');
    const results = await Promise.all(['a@race.test', 'b@race.test'].map((email) => gql(m.keys.test.privateKey, REMOVE, { email })));
    expect(results.filter((r) => r.data?.removeMember === true)).toHaveLength(1);
    expect(results.filter((r) => r.errors?.[0]?.extensions.code === 'FORBIDDEN')).toHaveLength(1);
    const left = (await gql(m.keys.test.privateKey, MEMBERS)).data.members;
    expect(left).toHaveLength(1);
    expect(left[0].role).toBe('OWNER');
  });

  describe('members acting through the domain services (the one check, whatever the interface)', () => {
    it('an ADMIN invites and removes members but cannot make, demote or remove an owner', async () => {
      const m = await createTestMerchant(t);
      await addMember(m, 'owner@adm.test', 'OWNER');
      await addMember(m, 'admin@adm.test', 'ADMIN');
      await addMember(m, 'viewer@adm.test', 'VIEWER');
      const admin = await memberPrincipal(m, 'admin@adm.test');
      const team = services().members;
      const kind = (p: Promise<unknown>) =>
        p.then(
          () => 'ok',
          (e: DomainError) => e.kind,
        );
      expect(await kind(team.removeMember(admin, 'owner@adm.test'))).toBe('forbidden');
      expect(await kind(team.changeMemberRole(admin, { email: 'owner@adm.test', role: 'VIEWER' }))).toBe('forbidden');
      expect(await kind(team.changeMemberRole(admin, { email: 'viewer@adm.test', role: 'OWNER' }))).toBe('forbidden');
      expect(await kind(team.inviteMember(admin, { email: 'new@adm.test', role: 'OWNER' }))).toBe('forbidden');
      expect(await kind(team.inviteMember(admin, { email: 'new@adm.test', role: 'DEVELOPER' }))).toBe('ok');
      expect(await kind(team.changeMemberRole(admin, { email: 'viewer@adm.test', role: 'SUPPORT' }))).toBe('ok');
      expect(await kind(team.removeMember(admin, 'viewer@adm.test'))).toBe('ok');
    });

    it('a member removed or demoted meanwhile is judged by what the database says now', async () => {
      const m = await createTestMerchant(t);
      await addMember(m, 'owner@now.test', 'OWNER');
      await addMember(m, 'admin@now.test', 'ADMIN');
      const admin = await memberPrincipal(m, 'admin@now.test');
      await gql(m.keys.test.privateKey, CHANGE, { input: { email: 'admin@now.test', role: 'VIEWER' } });
      await expect(services().members.inviteMember(admin, { email: 'x@now.test', role: 'VIEWER' })).rejects.toMatchObject({ kind: 'forbidden' });
      await gql(m.keys.test.privateKey, REMOVE, { email: 'admin@now.test' });
      await expect(services().merchants.setFeeBearer(admin, 'customer')).rejects.toMatchObject({ kind: 'forbidden' });
    });

    /** One real operation of each action class, as each role. */
    const ATTEMPTS: Record<Exclude<ActionClass, 'client'>, (p: Tenant) => Promise<unknown>> = {
      read: (p) => services().orders.page(p, {}, 1),
      'links.write': (p) =>
        services().links.create(p, { name: 'Role link', description: 'x', paymentType: 'SC', currency: 'NGN', amount: '10', authOption: 'AUTH' } as never),
      'payments.write': (p) => services().recurring.cancel(p, 'RP-none'),
      developers: (p) => services().webhooks.listDeliveries(p),
      secrets: (p) => services().merchants.rotateKeys(p, ['private']),
      members: (p) => services().members.inviteMember(p, { email: `inv${Math.random()}@matrix.test`, role: 'VIEWER' }),
    };
    const ALLOWED: Record<MemberRole, string[]> = {
      OWNER: ['read', 'links.write', 'payments.write', 'developers', 'secrets', 'members'],
      ADMIN: ['read', 'links.write', 'payments.write', 'developers', 'secrets', 'members'],
      DEVELOPER: ['read', 'developers'],
      SUPPORT: ['read', 'links.write', 'payments.write'],
      VIEWER: ['read'],
    };

    const ATTEMPT_NAMES: Record<keyof typeof ATTEMPTS, string> = {
      read: 'list orders',
      'links.write': 'create a payment link',
      'payments.write': 'cancel a subscription',
      developers: 'list webhook deliveries',
      secrets: 'rotate the private key',
      members: 'invite a member',
    };
    const teams = new Map<MemberRole, Promise<Tenant>>();
    /** One merchant per role, with an owner beside the member so every role is a real team member. */
    const memberWith = (role: MemberRole) => {
      if (!teams.has(role)) {
        teams.set(
          role,
          (async () => {
            const m = await createTestMerchant(t);
            if (role !== 'OWNER') await addMember(m, 'owner@matrix.test', 'OWNER');
            await addMember(m, 'me@matrix.test', role);
            return memberPrincipal(m, 'me@matrix.test');
          })(),
        );
      }
      return teams.get(role)!;
    };
    const cases = (Object.keys(ALLOWED) as MemberRole[]).flatMap((role) =>
      (Object.keys(ATTEMPTS) as (keyof typeof ATTEMPTS)[]).map((action) => ({
        role,
        action,
        allowed: ALLOWED[role].includes(action),
        title: `${role} ${ALLOWED[role].includes(action) ? 'may' : 'may not (FORBIDDEN)'} ${ATTEMPT_NAMES[action]} (${action})`,
      })),
    );

    it.each(cases)('$title', async ({ role, action, allowed }) => {
      const outcome = await ATTEMPTS[action](await memberWith(role)).then(
        () => 'allowed',
        // Any other refusal (not_found, validation) came after the check let the member through.
        (e: DomainError) => (e.kind === 'forbidden' ? 'forbidden' : 'allowed'),
      );
      expect(outcome).toBe(allowed ? 'allowed' : 'forbidden');
    });
  });
});
