import { createHash } from 'node:crypto';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../../support/smtp';
import { ManualClock } from '../../../src/shared/clock';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import type { MemberRole } from '../../../src/merchants/member-role';

const PASSWORD = 'the first password';
const NEW_PASSWORD = 'a brand new password';
const INVITE = `mutation ($input: InviteMemberInput!) { inviteMember(input: $input) { invitationUrl } }`;
const ACCEPT = `mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { email } }`;
const REQUEST = `mutation ($email: String!) { requestPasswordReset(email: $email) }`;
const CREATE_LINK = `mutation ($email: String!) { createPasswordResetLink(email: $email) { email resetUrl expiresAt } }`;
const RESET = `mutation ($input: ResetPasswordInput!) { resetPassword(input: $input) { email role } }`;

const tokenOf = (url: string) => new URL(url).pathname.split('/').pop()!;
/** The password-reset emails among those received (members join by invitation, which is emailed too). */
const isReset = (mail: ReceivedMail) => mail.subject.startsWith('Reset your password');

/** Password resets: links emailed on request (a real SMTP server in process) or made by an owner or admin. */
describe('password resets of members', () => {
  let smtp: TestSmtpServer;
  let t: TestService;
  let clock: ManualClock;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    clock = new ManualClock(new Date());
    // The rate limits of requestPasswordReset are tested below, with a service of their own.
    t = await startTestService({ SMTP_URL: smtp.url, RATE_LIMIT_PASSWORD_RESETS_PER_IP: '1000', RATE_LIMIT_PASSWORD_RESETS_PER_EMAIL: '1000' }, { clock });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  const services = () => t.service.runtime.ctx.services;
  const sql = <T = any>(query: string, params: unknown[] = []): Promise<T[]> => t.service.runtime.ctx.orm.em.fork().getConnection().execute(query, params);
  const gql = async (query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    (await request(t.baseUrl, 'POST', '/graphql', { body: { query, variables }, headers })).body;

  async function addMember(m: CreatedMerchant, email: string, role: MemberRole) {
    const invited = await gql(INVITE, { input: { email, role } }, { 'api-key': m.keys.test.privateKey });
    const accepted = await gql(ACCEPT, { input: { token: tokenOf(invited.data.inviteMember.invitationUrl), password: PASSWORD } });
    expect(accepted.errors).toBeUndefined();
  }

  async function signIn(email: string, password: string) {
    const r = await request(t.baseUrl, 'POST', '/dashboard/session', { body: { email, password } });
    const cookie = (r.headers.get('set-cookie') ?? '').split(';')[0]!;
    return { status: r.status, cookie, headers: { cookie, 'x-csrf-token': r.body?.csrfToken ?? '', 'x-environment': 'test' } };
  }

  it('emails a single-use link valid one hour to a member who asks; it sets the password, which then signs in (the old one no longer does)', async () => {
    const m = await createTestMerchant(t, { name: 'Abuja Books' });
    await addMember(m, 'reader@books.test', 'SUPPORT');

    const asked = await gql(REQUEST, { email: 'Reader@Books.test' });
    expect(asked).toEqual({ data: { requestPasswordReset: true } });
    const mail = await smtp.waitForMail('reader@books.test', isReset);
    expect(mail.subject).toContain('Abuja Books');
    const link = /(https?:\/\/\S+\/dashboard\/reset\/[A-Za-z0-9_-]+)/.exec(mail.text)?.[1];
    expect(link).toMatch(new RegExp(`^${t.config.publicUrl}/dashboard/reset/[A-Za-z0-9_-]{43}$`));
    expect(mail.text).toContain(new Date(clock.now().getTime() + 3600 * 1000).toUTCString());
    expect(mail.html).toContain(`href="${link}"`);

    const reset = await gql(RESET, { input: { token: tokenOf(link!), password: NEW_PASSWORD } });
    expect(reset).toEqual({ data: { resetPassword: { email: 'reader@books.test', role: 'SUPPORT' } } });
    expect((await signIn('reader@books.test', NEW_PASSWORD)).status).toBe(200);
    expect((await signIn('reader@books.test', PASSWORD)).status).toBe(401);
    // Once only.
    const again = await gql(RESET, { input: { token: tokenOf(link!), password: 'yet another password' } });
    expect(again.errors[0].extensions.code).toBe('RESET_LINK_INVALID');
  });

  it('answers an unknown email exactly as a member’s, and emails nobody', async () => {
    const m = await createTestMerchant(t);
    await addMember(m, 'known@books.test', 'VIEWER');
    const known = await request(t.baseUrl, 'POST', '/graphql', { body: { query: REQUEST, variables: { email: 'known@books.test' } } });
    const unknown = await request(t.baseUrl, 'POST', '/graphql', { body: { query: REQUEST, variables: { email: 'nobody@books.test' } } });
    expect(unknown.status).toBe(known.status);
    expect(unknown.text).toBe(known.text);
    await services().teamMail.settled();
    expect(smtp.received.filter((r) => r.to.includes('nobody@books.test'))).toEqual([]);
    expect(smtp.received.filter((r) => r.to.includes('known@books.test') && isReset(r))).toHaveLength(1);
    // A malformed email is bad input, which says nothing about anyone.
    expect((await gql(REQUEST, { email: 'not an email' })).errors[0].extensions.code).toBe('VAL400');
  });

  it('refuses a link after its hour, and a password shorter than 12 characters', async () => {
    const m = await createTestMerchant(t);
    await addMember(m, 'late@books.test', 'VIEWER');
    const made = await gql(CREATE_LINK, { email: 'late@books.test' }, { 'api-key': m.keys.test.privateKey });
    const token = tokenOf(made.data.createPasswordResetLink.resetUrl);
    expect((await gql(RESET, { input: { token, password: 'short' } })).errors[0].extensions.code).toBe('BAD_USER_INPUT');
    clock.advance(3600 * 1000 + 1);
    expect((await gql(RESET, { input: { token, password: NEW_PASSWORD } })).errors[0].extensions.code).toBe('RESET_LINK_INVALID');
    expect((await signIn('late@books.test', PASSWORD)).status).toBe(200);
  });

  it('ends every open session of the member when the password is reset', async () => {
    const m = await createTestMerchant(t);
    await addMember(m, 'busy@books.test', 'VIEWER');
    const first = await signIn('busy@books.test', PASSWORD);
    const second = await signIn('busy@books.test', PASSWORD);
    for (const s of [first, second]) expect((await request(t.baseUrl, 'GET', '/dashboard/session', { headers: { cookie: s.cookie } })).status).toBe(200);
    const made = await gql(CREATE_LINK, { email: 'busy@books.test' }, { 'api-key': m.keys.test.privateKey });
    expect((await gql(RESET, { input: { token: tokenOf(made.data.createPasswordResetLink.resetUrl), password: NEW_PASSWORD } })).errors).toBeUndefined();
    for (const s of [first, second]) {
      expect((await request(t.baseUrl, 'GET', '/dashboard/session', { headers: { cookie: s.cookie } })).status).toBe(401);
      expect((await gql('{ members { email } }', {}, s.headers)).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    }
  });

  it('lets an owner or admin make a link without email, an admin not for an owner, and nobody else', async () => {
    const m = await createTestMerchant(t);
    await addMember(m, 'boss@shop.test', 'OWNER');
    await addMember(m, 'admin@shop.test', 'ADMIN');
    await addMember(m, 'dev@shop.test', 'DEVELOPER');
    const admin = await signIn('admin@shop.test', PASSWORD);
    const dev = await signIn('dev@shop.test', PASSWORD);
    const boss = await signIn('boss@shop.test', PASSWORD);

    const forDev = await gql(CREATE_LINK, { email: 'DEV@shop.test' }, admin.headers);
    expect(forDev.data.createPasswordResetLink).toEqual({
      email: 'dev@shop.test',
      resetUrl: expect.stringMatching(new RegExp(`^${t.config.publicUrl}/dashboard/reset/[A-Za-z0-9_-]{43}$`)),
      expiresAt: new Date(clock.now().getTime() + 3600 * 1000).toISOString(),
    });
    expect((await gql(CREATE_LINK, { email: 'boss@shop.test' }, admin.headers)).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql(CREATE_LINK, { email: 'admin@shop.test' }, dev.headers)).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql(CREATE_LINK, { email: 'admin@shop.test' })).errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect((await gql(CREATE_LINK, { email: 'admin@shop.test' }, { 'api-key': m.keys.test.publicKey })).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql(CREATE_LINK, { email: 'stranger@shop.test' }, admin.headers)).errors[0].extensions.code).toBe('MEMBER_NOT_FOUND');
    // Another merchant's member is no member here.
    const other = await createTestMerchant(t);
    expect((await gql(CREATE_LINK, { email: 'dev@shop.test' }, { 'api-key': other.keys.test.privateKey })).errors[0].extensions.code).toBe('MEMBER_NOT_FOUND');
    expect((await gql(CREATE_LINK, { email: 'boss@shop.test' }, boss.headers)).data.createPasswordResetLink.email).toBe('boss@shop.test');
    expect((await gql(CREATE_LINK, { email: 'boss@shop.test' }, { 'api-key': m.keys.live.privateKey })).errors).toBeUndefined();
    // No email goes out for a link that is handed over.
    await services().teamMail.settled();
    expect(smtp.received.filter((r) => isReset(r) && r.to.some((to) => to.endsWith('@shop.test')))).toEqual([]);

    // The link works, and a newer link replaces an older one not yet used.
    const older = tokenOf(forDev.data.createPasswordResetLink.resetUrl);
    const newer = tokenOf((await gql(CREATE_LINK, { email: 'dev@shop.test' }, admin.headers)).data.createPasswordResetLink.resetUrl);
    expect((await gql(RESET, { input: { token: older, password: NEW_PASSWORD } })).errors[0].extensions.code).toBe('RESET_LINK_INVALID');
    expect((await gql(RESET, { input: { token: newer, password: NEW_PASSWORD } })).data.resetPassword.email).toBe('dev@shop.test');
  });

  it('stores only the hash of a link’s token, and records every step in the audit log', async () => {
    const m = await createTestMerchant(t);
    await addMember(m, 'kept@books.test', 'VIEWER');
    const made = await gql(CREATE_LINK, { email: 'kept@books.test' }, { 'api-key': m.keys.test.privateKey });
    const token = tokenOf(made.data.createPasswordResetLink.resetUrl);
    const stored = await sql<{ token_hash: string }>(
      `select r.token_hash from member_password_reset r join merchant_member mm on mm.id = r.member_id where mm.subsidiary_id = ?`,
      [m.subsidiary.id],
    );
    expect(stored).toEqual([{ token_hash: createHash('sha256').update(token).digest('hex') }]);
    await gql(REQUEST, { email: 'kept@books.test' });
    const mail = await smtp.waitForMail('kept@books.test', isReset);
    const emailed = tokenOf(/(https?:\/\/\S+\/dashboard\/reset\/[A-Za-z0-9_-]+)/.exec(mail.text)![1]!);
    expect((await gql(RESET, { input: { token: emailed, password: NEW_PASSWORD } })).errors).toBeUndefined();

    const entries = await sql<{ action: string; actor_type: string; target: string }>(
      `select action, actor_type, target from audit_entry where subsidiary_id = ? and action like 'member.password%' order by id`,
      [m.subsidiary.id],
    );
    expect(entries).toEqual([
      { action: 'member.password_reset_link_created', actor_type: 'API_KEY', target: 'kept@books.test' },
      { action: 'member.password_reset_requested', actor_type: 'SYSTEM', target: 'kept@books.test' },
      { action: 'member.password_reset', actor_type: 'MEMBER', target: 'kept@books.test' },
    ]);
  });

  it('lifts the lock of too many wrong passwords once the password is reset', async () => {
    const m = await createTestMerchant(t);
    await addMember(m, 'locked@books.test', 'VIEWER');
    for (let i = 0; i < 5; i++) expect((await signIn('locked@books.test', 'wrong password!')).status).toBe(401);
    expect((await signIn('locked@books.test', PASSWORD)).status).toBe(429);
    const made = await gql(CREATE_LINK, { email: 'locked@books.test' }, { 'api-key': m.keys.test.privateKey });
    await gql(RESET, { input: { token: tokenOf(made.data.createPasswordResetLink.resetUrl), password: NEW_PASSWORD } });
    expect((await signIn('locked@books.test', NEW_PASSWORD)).status).toBe(200);
  });
});

describe('rate limits of password-reset requests', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT_PASSWORD_RESETS_PER_IP: '5', RATE_LIMIT_PASSWORD_RESETS_PER_EMAIL: '2' });
  });
  afterAll(async () => t?.close());

  const ask = (email: string) => request(t.baseUrl, 'POST', '/graphql', { body: { query: REQUEST, variables: { email } } });

  it('refuses a third request for one email within the hour, whatever its case, and a sixth from one address within the minute', async () => {
    expect((await ask('a@limits.test')).body.data.requestPasswordReset).toBe(true);
    expect((await ask('A@Limits.test')).body.data.requestPasswordReset).toBe(true);
    const perEmail = await ask('a@limits.test');
    expect(perEmail.status).toBe(429);
    expect(perEmail.body.errors[0].extensions).toEqual({ code: 'RATE_LIMITED', retryAfterSeconds: expect.any(Number) });
    expect(Number(perEmail.headers.get('retry-after'))).toBeGreaterThan(60);
    // Another email is still answered, until the address has asked five times.
    expect((await ask('b@limits.test')).body.data.requestPasswordReset).toBe(true);
    expect((await ask('c@limits.test')).body.data.requestPasswordReset).toBe(true);
    const perIp = await ask('d@limits.test');
    expect(perIp.status).toBe(429);
    expect(perIp.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(Number(perIp.headers.get('retry-after'))).toBeLessThanOrEqual(60);
  });
});
