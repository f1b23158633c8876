import 'reflect-metadata';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { addMember, ownerOf, signInMember } from '../../support/members';
import { closedWithin, WsSession } from '../graphql/ws-session';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const MEMBERS = '{ members { email role testOnly } }';
const CHANGE_ROLE = `mutation ($input: ChangeMemberRoleInput!) { changeMemberRole(input: $input) { email role } }`;
const REMOVE = `mutation ($email: String!) { removeMember(email: $email) }`;
const RESET_LINK = `mutation ($email: String!) { createPasswordResetLink(email: $email) { resetUrl } }`;
const INVITE = `mutation ($input: InviteMemberInput!) { inviteMember(input: $input) { email role } }`;
const WEBHOOK = `mutation { setWebhookUrl(url: "https://merchant.example/hooks") { webhookUrl } }`;

/**
 * The team is the whole merchant's, but a test private key (usually in more hands than the live
 * one) acts in test mode: the members it makes work in the test environment only, and it cannot
 * change, remove or reset anyone who works in live.
 */
describe('members invited with a test-mode credential work in the test environment only', () => {
  let t: TestService;
  let m: CreatedMerchant;

  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT_AUTH_FAILURES: '1000' });
    m = await createTestMerchant(t);
  });
  afterAll(async () => t.close());

  const sql = (query: string, params: unknown[] = []): Promise<any[]> => t.service.runtime.ctx.orm.em.getConnection().execute(query, params);
  const gql = async (apiKey: string, query: string, variables: Record<string, unknown> = {}) =>
    (await request(t.baseUrl, 'POST', '/graphql', { apiKey, body: { query, variables } })).body;
  const gqlAs = async (headers: Record<string, string>, query: string, variables: Record<string, unknown> = {}) =>
    (await request(t.baseUrl, 'POST', '/graphql', { headers, body: { query, variables } })).body;
  const testOnlyOf = async (email: string) => ((await gql(m.keys.live.privateKey, MEMBERS)).data.members as any[]).find((x) => x.email === email)?.testOnly;

  it('an owner invited with the test key reaches the test environment, and is refused live', async () => {
    const owner = await addMember(t.baseUrl, m.keys.test.privateKey, 'test-owner@team.example', 'OWNER');
    expect(await testOnlyOf('test-owner@team.example')).toBe(true);
    const session = await signInMember(t.baseUrl, owner);
    expect(session.body.environments).toEqual(['test']);
    expect(session.body.environment).toBe('test');
    expect((await gqlAs(session.headers('test'), '{ merchant { environment } }')).data.merchant.environment).toBe('TEST');
    expect((await gqlAs(session.headers('test'), WEBHOOK)).errors).toBeUndefined();

    const live = await gqlAs(session.headers('live'), WEBHOOK);
    expect(live.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(live.errors[0].message).toMatch(/test environment only/);
    const described = await request(t.baseUrl, 'GET', '/dashboard/session', { headers: { cookie: session.cookie } });
    expect(described.body.environments).toEqual(['test']);

    // Over WebSocket: the test environment is acknowledged; live is closed 4403 with the reason.
    const socket = (environment: string) =>
      WsSession.open(t.baseUrl, { 'csrf-token': session.body.csrfToken, environment }, { cookie: session.cookie, origin: t.baseUrl });
    const testSocket = await socket('test');
    expect(testSocket.messages[0]!.type).toBe('connection_ack');
    testSocket.close();
    const liveSocket = await socket('live');
    expect(await closedWithin(liveSocket, 5_000)).toEqual({ code: 4403, reason: 'You work in the test environment only.' });
  });

  it("the test key cannot replace a pending invitation of someone who would work in live, nor an owner's", async () => {
    const invite = (apiKey: string, email: string, role: string) => gql(apiKey, INVITE, { input: { email, role } });
    expect((await invite(m.keys.live.privateKey, 'hired@team.example', 'SUPPORT')).errors).toBeUndefined();
    const replaced = await invite(m.keys.test.privateKey, 'hired@team.example', 'VIEWER');
    expect(replaced.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(replaced.errors[0].message).toMatch(/works in live too/);
    expect(await sql(`select role, test_only from member_invitation where lower(email) = 'hired@team.example' and accepted_at is null`)).toEqual([
      { role: 'SUPPORT', test_only: false },
    ]);

    // A test-only admin may not replace a test-only owner's invitation either: only an owner may.
    expect((await invite(m.keys.test.privateKey, 'future-owner@team.example', 'OWNER')).errors).toBeUndefined();
    const admin = await addMember(t.baseUrl, m.keys.test.privateKey, 'test-admin@team.example', 'ADMIN');
    const adminSession = await signInMember(t.baseUrl, admin);
    const byAdmin = await gqlAs(adminSession.headers('test'), INVITE, { input: { email: 'future-owner@team.example', role: 'VIEWER' } });
    expect(byAdmin.errors[0].extensions.code).toBe('FORBIDDEN');
    // The live key replaces either.
    expect((await invite(m.keys.live.privateKey, 'future-owner@team.example', 'ADMIN')).errors).toBeUndefined();
  });

  it('the test key cannot change, remove or reset a member who works in live; the live key can', async () => {
    const liveOwner = await ownerOf(t.baseUrl, m);
    const liveAdmin = await addMember(t.baseUrl, m.keys.live.privateKey, 'live-admin@team.example', 'ADMIN');
    expect(await testOnlyOf(liveAdmin.email)).toBe(false);
    for (const [query, variables] of [
      [CHANGE_ROLE, { input: { email: liveAdmin.email, role: 'VIEWER' } }],
      [CHANGE_ROLE, { input: { email: liveOwner.email, role: 'ADMIN' } }],
      [REMOVE, { email: liveAdmin.email }],
      [RESET_LINK, { email: liveOwner.email }],
      [RESET_LINK, { email: liveAdmin.email }],
    ] as const) {
      const refused = await gql(m.keys.test.privateKey, query, variables);
      expect(refused.errors[0].extensions.code).toBe('FORBIDDEN');
      expect(refused.errors[0].message).toMatch(/works in live too/);
    }
    const members = (await gql(m.keys.live.privateKey, MEMBERS)).data.members as any[];
    expect(members.find((x) => x.email === liveAdmin.email).role).toBe('ADMIN');
    expect(members.find((x) => x.email === liveOwner.email).role).toBe('OWNER');
    // Nothing was issued either: the live owner still signs in, in both environments.
    expect((await signInMember(t.baseUrl, liveOwner)).body.environments).toEqual(['test', 'live']);

    expect((await gql(m.keys.live.privateKey, CHANGE_ROLE, { input: { email: liveAdmin.email, role: 'VIEWER' } })).data.changeMemberRole.role).toBe('VIEWER');
    expect((await gql(m.keys.live.privateKey, REMOVE, { email: liveAdmin.email })).data.removeMember).toBe(true);
  });

  it('the test key manages the members it made, and a test-only owner makes only test-only members', async () => {
    const dev = await addMember(t.baseUrl, m.keys.test.privateKey, 'test-dev@team.example', 'DEVELOPER');
    expect((await gql(m.keys.test.privateKey, CHANGE_ROLE, { input: { email: dev.email, role: 'SUPPORT' } })).data.changeMemberRole.role).toBe('SUPPORT');
    expect((await gql(m.keys.test.privateKey, RESET_LINK, { email: dev.email })).data.createPasswordResetLink.resetUrl).toMatch(/\/dashboard\/reset\//);
    expect((await gql(m.keys.test.privateKey, REMOVE, { email: dev.email })).data.removeMember).toBe(true);

    const testOwner = await addMember(t.baseUrl, m.keys.test.privateKey, 'test-owner-2@team.example', 'OWNER');
    const session = await signInMember(t.baseUrl, testOwner);
    expect((await gqlAs(session.headers('test'), INVITE, { input: { email: 'by-test-owner@team.example', role: 'ADMIN' } })).errors).toBeUndefined();
    const liveOwner = await ownerOf(t.baseUrl, m);
    const refused = await gqlAs(session.headers('test'), CHANGE_ROLE, { input: { email: liveOwner.email, role: 'VIEWER' } });
    expect(refused.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('a member invited by a test-only owner works in test only too', async () => {
    const testOwner = await addMember(t.baseUrl, m.keys.test.privateKey, 'test-owner-3@team.example', 'OWNER');
    const session = await signInMember(t.baseUrl, testOwner);
    const invited = await request(t.baseUrl, 'POST', '/graphql', {
      headers: session.headers('test'),
      body: { query: `mutation { inviteMember(input: { email: "second@team.example", role: VIEWER }) { invitationUrl } }` },
    });
    const token = invited.body.data.inviteMember.invitationUrl.split('/').pop();
    const accepted = await gql(m.keys.test.publicKey, `mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { email testOnly } }`, {
      input: { token, password: 'a long enough password' },
    });
    expect(accepted.data.acceptInvitation).toEqual({ email: 'second@team.example', testOnly: true });
  });

  it('the last owner who works in live stays: owners who work in test only do not count', async () => {
    const fresh = await createTestMerchant(t);
    const liveOwner = await addMember(t.baseUrl, fresh.keys.live.privateKey, 'only-live-owner@team.example', 'OWNER');
    await addMember(t.baseUrl, fresh.keys.test.privateKey, 'test-only-owner@team.example', 'OWNER');
    const refused = await gql(fresh.keys.live.privateKey, REMOVE, { email: liveOwner.email });
    expect(refused.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(refused.errors[0].message).toMatch(/always keeps one owner/);
    // The test-only owner may go: the live owner stays.
    expect((await gql(fresh.keys.live.privateKey, REMOVE, { email: 'test-only-owner@team.example' })).data.removeMember).toBe(true);
  });

  it('the live key lets a test-only member work in live without a new invitation, and back to test: their open session follows at once', async () => {
    const dev = await addMember(t.baseUrl, m.keys.test.privateKey, 'promoted-dev@team.example', 'DEVELOPER');
    const before = await signInMember(t.baseUrl, dev);
    expect(before.body.environments).toEqual(['test']);
    const changed = await gql(m.keys.live.privateKey, `mutation ($input: ChangeMemberRoleInput!) { changeMemberRole(input: $input) { email role testOnly } }`, {
      input: { email: dev.email, role: 'DEVELOPER', testOnly: false },
    });
    expect(changed.data.changeMemberRole).toEqual({ email: dev.email, role: 'DEVELOPER', testOnly: false });
    // The session opened before the change reaches live now, as a role change applies at once.
    const described = async () => (await request(t.baseUrl, 'GET', '/dashboard/session', { headers: { cookie: before.cookie } })).body.environments;
    expect(await described()).toEqual(['test', 'live']);
    expect((await gqlAs(before.headers('live'), '{ merchant { environment } }')).data.merchant.environment).toBe('LIVE');
    const [entry] = await sql(`select target, environment from audit_entry where subsidiary_id = ? and action = 'member.role_changed' and target like ?`, [
      m.subsidiary.id,
      `${dev.email} %`,
    ]);
    expect(entry).toEqual({ target: `${dev.email} from DEVELOPER (test only) to DEVELOPER`, environment: null });

    // And back: the live key may restrict them to test again.
    expect((await gql(m.keys.live.privateKey, CHANGE_ROLE, { input: { email: dev.email, role: 'DEVELOPER', testOnly: true } })).errors).toBeUndefined();
    expect(await testOnlyOf(dev.email)).toBe(true);
    expect(await described()).toEqual(['test']);
    expect((await gqlAs(before.headers('live'), '{ merchant { environment } }')).errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('only a caller who works in live lets a member work in live: the test key and a test-only owner are refused, nothing changes', async () => {
    const dev = await addMember(t.baseUrl, m.keys.test.privateKey, 'kept-in-test@team.example', 'DEVELOPER');
    const testOwner = await addMember(t.baseUrl, m.keys.test.privateKey, 'test-owner-4@team.example', 'OWNER');
    const session = await signInMember(t.baseUrl, testOwner);
    const input = { email: dev.email, role: 'DEVELOPER', testOnly: false };
    for (const refused of [await gql(m.keys.test.privateKey, CHANGE_ROLE, { input }), await gqlAs(session.headers('test'), CHANGE_ROLE, { input })]) {
      expect(refused.errors[0].extensions.code).toBe('FORBIDDEN');
      expect(refused.errors[0].message).toMatch(/works in live too/);
    }
    // Nor may a test-only owner lift themself.
    const self = await gqlAs(session.headers('test'), CHANGE_ROLE, { input: { email: testOwner.email, role: 'OWNER', testOnly: false } });
    expect(self.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(await testOnlyOf(dev.email)).toBe(true);
    expect(await testOnlyOf(testOwner.email)).toBe(true);
    // Keeping them in test is no change of reach: the test key may still change the role.
    expect((await gql(m.keys.test.privateKey, CHANGE_ROLE, { input: { ...input, role: 'VIEWER', testOnly: true } })).data.changeMemberRole.role).toBe('VIEWER');
  });

  it('the last owner who works in live cannot be restricted to test', async () => {
    const fresh = await createTestMerchant(t);
    const liveOwner = await addMember(t.baseUrl, fresh.keys.live.privateKey, 'sole-live-owner@team.example', 'OWNER');
    const refused = await gql(fresh.keys.live.privateKey, CHANGE_ROLE, { input: { email: liveOwner.email, role: 'OWNER', testOnly: true } });
    expect(refused.errors[0].extensions.code).toBe('FORBIDDEN');
    expect(refused.errors[0].message).toMatch(/always keeps one owner/);
  });
});
