import 'reflect-metadata';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { closedWithin, WsSession } from '../graphql/ws-session';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import type { MemberRole } from '../../../src/merchants/member-role';

const PASSWORD = 'correct horse battery';
const INVITE = `mutation ($input: InviteMemberInput!) { inviteMember(input: $input) { invitationUrl } }`;
const ACCEPT = `mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { email } }`;
const CREATE_LINK = `mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { id name } }`;
const LINK_INPUT = { input: { name: 'Team link', description: 'made by a member', paymentType: 'MC' } };
const MERCHANT = '{ merchant { environment } }';
const AUDIT = `{ auditLog(first: 100) { edges { node { action actorType actorLabel target ip environment } } } }`;

describe('members sign in to the dashboard with email and password', () => {
  let t: TestService;
  let m: CreatedMerchant;

  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT_AUTH_FAILURES: '1000' });
    m = await createTestMerchant(t);
  });
  afterAll(async () => t.close());

  // The live private key: the members it invites work in both environments.
  const gqlKey = async (query: string, variables: Record<string, unknown> = {}) =>
    (await request(t.baseUrl, 'POST', '/graphql', { apiKey: m.keys.live.privateKey, body: { query, variables } })).body;

  async function addMember(email: string, role: MemberRole): Promise<void> {
    const invited = await gqlKey(INVITE, { input: { email, role } });
    const token = invited.data.inviteMember.invitationUrl.split('/').pop();
    const accepted = await request(t.baseUrl, 'POST', '/graphql', { body: { query: ACCEPT, variables: { input: { token, password: PASSWORD } } } });
    expect(accepted.body.errors).toBeUndefined();
  }
  const signIn = (email: string, password: string) => request(t.baseUrl, 'POST', '/dashboard/session', { body: { email, password } });

  async function session(email: string) {
    const res = await signIn(email, PASSWORD);
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie')!.split(';')[0]!;
    return { body: res.body, headers: (environment: string) => ({ cookie, 'x-csrf-token': res.body.csrfToken, 'x-environment': environment }), cookie };
  }
  const gqlAs = async (headers: Record<string, string>, query: string, variables: Record<string, unknown> = {}) =>
    (await request(t.baseUrl, 'POST', '/graphql', { body: { query, variables }, headers })).body;
  const auditEntries = async () => (await gqlKey(AUDIT)).data.auditLog.edges.map((e: { node: Record<string, unknown> }) => e.node) as Record<string, unknown>[];

  it('names the member and role; a VIEWER is refused a link that an ADMIN creates, over HTTP and WebSocket, in test and live', async () => {
    await addMember('viewer@team.example', 'VIEWER');
    await addMember('Admin@Team.example', 'ADMIN');
    const viewer = await session('viewer@team.example');
    expect(viewer.body).toMatchObject({
      environments: ['test', 'live'],
      merchantName: m.subsidiary.name,
      member: { email: 'viewer@team.example', role: 'VIEWER' },
      // What the dashboard may show: the classes of the permission table this role has.
      actions: ['client', 'read'],
    });
    expect(viewer.body).not.toHaveProperty('token');

    const refused = await gqlAs(viewer.headers('test'), CREATE_LINK, LINK_INPUT);
    expect(refused.errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gqlAs(viewer.headers('test'), MERCHANT)).data.merchant.environment).toBe('TEST');

    // The email is matched whatever its case; one sign-in reaches both environments.
    const admin = await session('ADMIN@team.example');
    expect(admin.body.member).toEqual({ email: 'admin@team.example', role: 'ADMIN' });
    const created = await gqlAs(admin.headers('test'), CREATE_LINK, LINK_INPUT);
    expect(created.errors).toBeUndefined();
    expect(created.data.createPaymentLink.name).toBe('Team link');
    expect((await gqlAs(admin.headers('live'), MERCHANT)).data.merchant.environment).toBe('LIVE');
    expect((await gqlAs(admin.headers('live'), CREATE_LINK, LINK_INPUT)).errors).toBeUndefined();

    // The page that reloads learns who is signed in, and what the role allows.
    const described = await request(t.baseUrl, 'GET', '/dashboard/session', { headers: { cookie: viewer.cookie } });
    expect(described.body.member).toEqual({ email: 'viewer@team.example', role: 'VIEWER' });
    expect(described.body.actions).toEqual(['client', 'read']);
    expect(admin.body.actions).toEqual(['client', 'read', 'links.write', 'payments.write', 'developers', 'secrets', 'members']);

    for (const [who, code] of [
      [viewer, 'FORBIDDEN'],
      [admin, undefined],
    ] as const) {
      const ws = await WsSession.open(t.baseUrl, { 'csrf-token': who.body.csrfToken, environment: 'live' }, { cookie: who.cookie, origin: t.baseUrl });
      expect(ws.messages[0]!.type).toBe('connection_ack');
      ws.subscribe('1', CREATE_LINK, LINK_INPUT);
      const result = await ws.result('1');
      const errors = result.payload?.errors ?? (Array.isArray(result.payload) ? result.payload : undefined);
      if (code) expect(errors[0].extensions.code).toBe(code);
      else expect(result.payload.data.createPaymentLink.name).toBe('Team link');
      ws.close();
    }
  });

  it('ends an open session at once when the member is removed, or their role changes: requests are refused and open sockets close', async () => {
    await addMember('leaving@team.example', 'SUPPORT');
    await addMember('moving@team.example', 'SUPPORT');
    const leaving = await session('leaving@team.example');
    const moving = await session('moving@team.example');
    expect((await gqlAs(leaving.headers('test'), CREATE_LINK, LINK_INPUT)).errors).toBeUndefined();
    expect((await gqlAs(moving.headers('test'), CREATE_LINK, LINK_INPUT)).errors).toBeUndefined();

    const socketOf = async (who: typeof leaving, environment: string) => {
      const ws = await WsSession.open(t.baseUrl, { 'csrf-token': who.body.csrfToken, environment }, { cookie: who.cookie, origin: t.baseUrl });
      expect(ws.messages[0]!.type).toBe('connection_ack');
      return ws;
    };
    const leavingSockets = [await socketOf(leaving, 'test'), await socketOf(leaving, 'live')];
    const movingSocket = await socketOf(moving, 'live');
    const staying = await socketOf(await session('admin@team.example'), 'test');

    // Removed: the member's sockets in both environments close (4403) without waiting for their next operation.
    expect((await gqlKey(`mutation { removeMember(email: "leaving@team.example") }`)).data.removeMember).toBe(true);
    for (const ws of leavingSockets) expect(await closedWithin(ws, 5_000)).toEqual({ code: 4403, reason: expect.stringContaining('Forbidden') });
    expect((await gqlAs(leaving.headers('test'), MERCHANT)).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect((await request(t.baseUrl, 'GET', '/dashboard/session', { headers: { cookie: leaving.cookie } })).status).toBe(401);

    // A new role: the session opened with the old one ends, its socket too.
    const changed = await gqlKey(`mutation { changeMemberRole(input: { email: "moving@team.example", role: ADMIN }) { role } }`);
    expect(changed.data.changeMemberRole.role).toBe('ADMIN');
    expect(await closedWithin(movingSocket, 5_000)).toEqual({ code: 4403, reason: expect.stringContaining('Forbidden') });
    expect((await gqlAs(moving.headers('test'), MERCHANT)).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    // Signing in again gives a session with the new role.
    const again = await session('moving@team.example');
    expect(again.body.member.role).toBe('ADMIN');

    // Other members' sockets stay open and keep working.
    expect(staying.isOpen).toBe(true);
    staying.subscribe('1', MERCHANT);
    expect((await staying.result('1')).payload.data.merchant.environment).toBe('TEST');
    staying.close();
  });

  it('refuses a wrong password or unknown email alike, and locks the account after 5 wrong passwords', async () => {
    await addMember('target@team.example', 'VIEWER');
    const unknown = await signIn('nobody@team.example', PASSWORD);
    expect(unknown.status).toBe(401);
    for (let i = 0; i < 5; i++) {
      const wrong = await signIn('target@team.example', 'not the password at all');
      expect(wrong.status).toBe(401);
      expect(wrong.body.message).toBe(unknown.body.message);
      expect(wrong.headers.get('set-cookie')).toBeNull();
    }
    // The sixth attempt is refused even with the right password, and says when to come back.
    const locked = await signIn('target@team.example', PASSWORD);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(locked.headers.get('set-cookie')).toBeNull();
    // Another account of the same merchant is not affected.
    expect((await signIn('admin@team.example', PASSWORD)).status).toBe(200);
  });

  it("a membership of the same email at another merchant, signed in with its own password, neither locks this merchant's account nor writes into its audit log", async () => {
    await addMember('shared@team.example', 'VIEWER');
    // Another merchant makes a membership of the same email, with a password of its choosing.
    const other = await createTestMerchant(t);
    const OTHER_PASSWORD = 'the other merchant chose this';
    const invited = (
      await request(t.baseUrl, 'POST', '/graphql', {
        apiKey: other.keys.test.privateKey,
        body: { query: INVITE, variables: { input: { email: 'shared@team.example', role: 'OWNER' } } },
      })
    ).body;
    const token = invited.data.inviteMember.invitationUrl.split('/').pop();
    const accepted = await request(t.baseUrl, 'POST', '/graphql', { body: { query: ACCEPT, variables: { input: { token, password: OTHER_PASSWORD } } } });
    expect(accepted.body.errors).toBeUndefined();

    for (let i = 0; i < 6; i++) {
      const res = await signIn('shared@team.example', OTHER_PASSWORD);
      expect(res.status).toBe(200);
      expect(res.body.merchantName).toBe(other.subsidiary.name);
    }
    // This merchant's membership still signs in with its own password, and its log saw nothing.
    const own = await signIn('shared@team.example', PASSWORD);
    expect(own.status).toBe(200);
    expect(own.body.merchantName).toBe(m.subsidiary.name);
    const entries = async () => (await auditEntries()).filter((e) => e.actorLabel === 'shared@team.example' && String(e.action).startsWith('session.'));
    expect((await entries()).map((e) => e.action)).toEqual(['session.signed_in']);

    // A password of neither is a failure at both.
    expect((await signIn('shared@team.example', 'neither of the two passwords')).status).toBe(401);
    expect((await entries()).map((e) => `${e.action} ${e.target}`)).toEqual(['session.sign_in_failed wrong password', 'session.signed_in dashboard']);
  });

  it('records sign-ins and failed sign-ins in the audit log, as the member', async () => {
    await addMember('audited@team.example', 'DEVELOPER');
    expect((await signIn('audited@team.example', 'a wrong password!')).status).toBe(401);
    expect((await signIn('audited@team.example', PASSWORD)).status).toBe(200);
    const mine = (await auditEntries()).filter((e) => e.actorLabel === 'audited@team.example' && String(e.action).startsWith('session.'));
    expect(mine.slice(0, 2)).toEqual([
      { action: 'session.signed_in', actorType: 'MEMBER', actorLabel: 'audited@team.example', target: 'dashboard', ip: expect.any(String), environment: null },
      {
        action: 'session.sign_in_failed',
        actorType: 'MEMBER',
        actorLabel: 'audited@team.example',
        target: 'wrong password',
        ip: expect.any(String),
        environment: null,
      },
    ]);
    const locked = (await auditEntries()).filter((e) => e.actorLabel === 'target@team.example' && String(e.action).startsWith('session.')).map((e) => e.target);
    expect(locked).toEqual(['too many failed sign-ins', ...Array(5).fill('wrong password')]);
  });
});
