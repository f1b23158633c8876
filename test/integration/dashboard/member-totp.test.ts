import 'reflect-metadata';
import { generate } from 'otplib';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { TEST_MASTER_KEY } from '../../support/database';
import { WsSession } from '../graphql/ws-session';
import { ManualClock } from '../../../src/shared/clock';
import { SecretBox, parseMasterKey } from '../../../src/crypto/secret-box';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const PASSWORD = 'correct horse battery';
const INVITE = `mutation ($input: InviteMemberInput!) { inviteMember(input: $input) { invitationUrl } }`;
const ACCEPT = `mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { email } }`;
const ACCOUNT = `{ myAccount { email role totpEnabled recoveryCodesLeft } }`;
const START = `mutation { startTotpEnrolment { secret otpauthUri qrCodeDataUrl } }`;
const CONFIRM = `mutation ($code: String!) { confirmTotpEnrolment(input: { code: $code }) { recoveryCodes } }`;
const DISABLE = `mutation ($input: DisableTotpInput!) { disableTotp(input: $input) }`;
const AUDIT = `{ auditLog(first: 100) { edges { node { action actorType actorLabel target } } } }`;

type Headers = Record<string, string>;

describe('two-step sign-in of members with an authenticator app (TOTP)', () => {
  let t: TestService;
  let m: CreatedMerchant;
  // Ten seconds into a 30-second step, so "the step before" and "the next step" are exact.
  const clock = new ManualClock(new Date(Math.floor(Date.now() / 30_000) * 30_000 + 10_000));

  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT_AUTH_FAILURES: '1000' }, { clock });
    m = await createTestMerchant(t);
  });
  afterAll(async () => t.close());

  const sql = (query: string, params: unknown[] = []): Promise<any[]> => t.service.runtime.ctx.orm.em.getConnection().execute(query, params);
  const gqlKey = async (query: string, variables: Record<string, unknown> = {}) =>
    (await request(t.baseUrl, 'POST', '/graphql', { apiKey: m.keys.test.privateKey, body: { query, variables } })).body;
  const gqlAs = async (headers: Headers, query: string, variables: Record<string, unknown> = {}) =>
    (await request(t.baseUrl, 'POST', '/graphql', { body: { query, variables }, headers })).body;
  /** The code an authenticator app shows at the clock's time, `steps` steps later (or earlier). */
  const codeAt = (secret: string, steps = 0) => generate({ secret, epoch: Math.floor(clock.now().getTime() / 1000) + steps * 30 });
  const nextStep = () => clock.advance(30_000);
  const signIn = (email: string, password: string, code?: string) =>
    request(t.baseUrl, 'POST', '/dashboard/session', { body: { email, password, ...(code !== undefined ? { code } : {}) } });
  const auditEntries = async () => (await gqlKey(AUDIT)).data.auditLog.edges.map((e: { node: Record<string, unknown> }) => e.node) as Record<string, unknown>[];

  async function addMember(email: string): Promise<number> {
    const invited = await gqlKey(INVITE, { input: { email, role: 'DEVELOPER' } });
    const token = invited.data.inviteMember.invitationUrl.split('/').pop();
    const accepted = await request(t.baseUrl, 'POST', '/graphql', { body: { query: ACCEPT, variables: { input: { token, password: PASSWORD } } } });
    expect(accepted.body.errors).toBeUndefined();
    const [row] = await sql('select id from merchant_member where subsidiary_id = ? and email = ?', [m.subsidiary.id, email]);
    return Number(row.id);
  }

  async function sessionHeaders(email: string, code?: string): Promise<Headers> {
    const res = await signIn(email, PASSWORD, code);
    expect(res.status).toBe(200);
    return { cookie: res.headers.get('set-cookie')!.split(';')[0]!, 'x-csrf-token': res.body.csrfToken, 'x-environment': 'test' };
  }

  /** A member with two-step sign-in on: their secret and recovery codes. The clock is then a step past the confirming code. */
  async function enrolled(email: string): Promise<{ id: number; secret: string; recoveryCodes: string[]; headers: Headers }> {
    const id = await addMember(email);
    const headers = await sessionHeaders(email);
    const { secret } = (await gqlAs(headers, START)).data.startTotpEnrolment;
    const confirmed = await gqlAs(headers, CONFIRM, { code: await codeAt(secret) });
    expect(confirmed.errors).toBeUndefined();
    nextStep();
    return { id, secret, recoveryCodes: confirmed.data.confirmTotpEnrolment.recoveryCodes, headers };
  }

  it('enrols with a code of the secret shown, then shows ten recovery codes once and stores only the sealed secret and hashes', async () => {
    const id = await addMember('enrol@team.example');
    const headers = await sessionHeaders('enrol@team.example');
    expect((await gqlAs(headers, ACCOUNT)).data.myAccount).toEqual({
      email: 'enrol@team.example',
      role: 'DEVELOPER',
      totpEnabled: false,
      recoveryCodesLeft: 0,
    });

    const started = await gqlAs(headers, START);
    expect(started.errors).toBeUndefined();
    const { secret, otpauthUri, qrCodeDataUrl } = started.data.startTotpEnrolment;
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(otpauthUri).toBe(`otpauth://totp/Checkout%20gateway:enrol%40team.example?secret=${secret}&issuer=Checkout%20gateway`);
    expect(qrCodeDataUrl).toMatch(/^data:image\/png;base64,/);
    expect(Buffer.from(qrCodeDataUrl.split(',')[1], 'base64').subarray(1, 4).toString('latin1')).toBe('PNG');

    // Stored sealed under MASTER_KEY, in a context of its own row; not yet on.
    const box = new SecretBox(parseMasterKey(TEST_MASTER_KEY));
    const [pending] = await sql('select totp_secret_sealed, totp_pending_secret_sealed from merchant_member where id = ?', [id]);
    expect(pending.totp_secret_sealed).toBeNull();
    expect(pending.totp_pending_secret_sealed).not.toContain(secret);
    expect(box.open(pending.totp_pending_secret_sealed, `member-totp-pending:${id}`)).toBe(secret);
    expect((await signIn('enrol@team.example', PASSWORD)).status).toBe(200);

    // A code of another time (five minutes off) does not confirm it.
    const wrong = await gqlAs(headers, CONFIRM, { code: await codeAt(secret, 10) });
    expect(wrong.errors[0].extensions.code).toBe('TOTP_CODE_INVALID');
    expect((await gqlAs(headers, ACCOUNT)).data.myAccount.totpEnabled).toBe(false);

    const confirmed = await gqlAs(headers, CONFIRM, { code: await codeAt(secret) });
    expect(confirmed.errors).toBeUndefined();
    const codes: string[] = confirmed.data.confirmTotpEnrolment.recoveryCodes;
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    for (const code of codes) expect(code).toMatch(/^[0-9a-z]{5}-[0-9a-z]{5}$/);
    expect((await gqlAs(headers, ACCOUNT)).data.myAccount).toMatchObject({ totpEnabled: true, recoveryCodesLeft: 10 });

    const [on] = await sql('select totp_secret_sealed, totp_pending_secret_sealed, totp_enabled_at from merchant_member where id = ?', [id]);
    expect(on.totp_pending_secret_sealed).toBeNull();
    expect(on.totp_enabled_at).not.toBeNull();
    expect(box.open(on.totp_secret_sealed, `member-totp:${id}`)).toBe(secret);
    const hashes = (await sql('select code_hash from member_recovery_code where member_id = ?', [id])).map((r: { code_hash: string }) => r.code_hash);
    expect(hashes).toHaveLength(10);
    for (const code of codes) expect(hashes.join(' ')).not.toContain(code.replace('-', ''));

    // Shown once: a second enrolment is refused while it is on.
    expect((await gqlAs(headers, START)).errors[0].extensions.code).toBe('TOTP_ALREADY_ENABLED');
    expect((await auditEntries()).find((e) => e.action === 'member.totp_enabled')).toEqual({
      action: 'member.totp_enabled',
      actorType: 'MEMBER',
      actorLabel: 'enrol@team.example',
      target: 'enrol@team.example',
    });
  });

  it('is for a member signed in as themself: an api-key is refused, over HTTP and WebSocket', async () => {
    for (const query of [ACCOUNT, START]) expect((await gqlKey(query)).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gqlKey(DISABLE, { input: { password: PASSWORD } })).errors[0].extensions.code).toBe('FORBIDDEN');
    const ws = await WsSession.open(t.baseUrl, { 'api-key': m.keys.test.privateKey });
    ws.subscribe('1', START);
    const refused = await ws.result('1');
    expect((refused.payload?.errors ?? refused.payload)[0].extensions.code).toBe('FORBIDDEN');
    ws.close();
  });

  it('asks for the code after the right password, opens a session for the current code, and refuses it a second time', async () => {
    const { secret } = await enrolled('twostep@team.example');
    // A wrong password is refused as before: the code is not asked for.
    const wrongPassword = await signIn('twostep@team.example', 'not the password at all');
    expect(wrongPassword.status).toBe(401);
    expect(wrongPassword.body.codeRequired).toBeUndefined();

    const asked = await signIn('twostep@team.example', PASSWORD);
    expect(asked.status).toBe(401);
    expect(asked.body).toMatchObject({ code: 'TOTP_REQUIRED', codeRequired: true });
    expect(asked.headers.get('set-cookie')).toBeNull();

    const code = await codeAt(secret);
    const signedIn = await signIn('twostep@team.example', PASSWORD, code);
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.member).toEqual({ email: 'twostep@team.example', role: 'DEVELOPER' });

    // The same code again, even within its step, is refused and opens nothing.
    const replayed = await signIn('twostep@team.example', PASSWORD, code);
    expect(replayed.status).toBe(401);
    expect(replayed.body).toMatchObject({ code: 'TOTP_INVALID', codeRequired: true });
    expect(replayed.headers.get('set-cookie')).toBeNull();

    // A step later, the previous step's code is still in the ±1 window but older than the one used: refused.
    nextStep();
    expect((await signIn('twostep@team.example', PASSWORD, code)).status).toBe(401);
    // The app's new code works; one from the step after is accepted too (a clock slightly ahead).
    expect((await signIn('twostep@team.example', PASSWORD, ` ${await codeAt(secret)} `)).status).toBe(200);
    expect((await signIn('twostep@team.example', PASSWORD, await codeAt(secret, 1))).status).toBe(200);
    // Two steps ahead is outside the window.
    expect((await signIn('twostep@team.example', PASSWORD, await codeAt(secret, 3))).status).toBe(401);

    const mine = (await auditEntries()).filter((e) => e.actorLabel === 'twostep@team.example' && e.action === 'session.sign_in_failed').map((e) => e.target);
    expect(mine).toEqual(['wrong authentication code', 'wrong authentication code', 'wrong authentication code', 'wrong password']);
  });

  it('counts wrong codes towards the per-account limit of failed sign-ins', async () => {
    const { secret } = await enrolled('guessing@team.example');
    for (let i = 0; i < 5; i++) {
      const wrong = await signIn('guessing@team.example', PASSWORD, '000000');
      expect(wrong.status).toBe(401);
      expect(wrong.body.code).toBe('TOTP_INVALID');
    }
    const locked = await signIn('guessing@team.example', PASSWORD, await codeAt(secret));
    expect(locked.status).toBe(429);
    expect(locked.headers.get('set-cookie')).toBeNull();
  });

  it('signs in with each recovery code once, in any case and with or without its hyphen', async () => {
    const { recoveryCodes, headers } = await enrolled('recovering@team.example');
    const used = await signIn('recovering@team.example', PASSWORD, recoveryCodes[0]);
    expect(used.status).toBe(200);
    const again = await signIn('recovering@team.example', PASSWORD, recoveryCodes[0]);
    expect(again.status).toBe(401);
    expect(again.body.code).toBe('TOTP_INVALID');
    expect((await signIn('recovering@team.example', PASSWORD, recoveryCodes[1]!.replace('-', '').toUpperCase())).status).toBe(200);
    expect((await gqlAs(headers, ACCOUNT)).data.myAccount.recoveryCodesLeft).toBe(8);
    const entries = (await auditEntries()).filter((e) => e.actorLabel === 'recovering@team.example' && e.action === 'session.recovery_code_used');
    expect(entries.map((e) => e.target)).toEqual(['8 recovery codes left', '9 recovery codes left']);
  });

  it('lets one of several simultaneous sign-ins with the same code or recovery code through', async () => {
    const { secret, recoveryCodes } = await enrolled('racing@team.example');
    const code = await codeAt(secret);
    const withCode = await Promise.all(Array.from({ length: 4 }, () => signIn('racing@team.example', PASSWORD, code)));
    expect(withCode.map((r) => r.status).sort()).toEqual([200, 401, 401, 401]);
    const withRecovery = await Promise.all(Array.from({ length: 4 }, () => signIn('racing@team.example', PASSWORD, recoveryCodes[0])));
    expect(withRecovery.map((r) => r.status).sort()).toEqual([200, 401, 401, 401]);
  });

  it('turns off with the password or a current code, never with a wrong one', async () => {
    const { id, secret, headers } = await enrolled('leaving2fa@team.example');
    const wrongPassword = await gqlAs(headers, DISABLE, { input: { password: 'not the password at all' } });
    expect(wrongPassword.errors[0].extensions.code).toBe('PASSWORD_INVALID');
    const wrongCode = await gqlAs(headers, DISABLE, { input: { code: await codeAt(secret, 10) } });
    expect(wrongCode.errors[0].extensions.code).toBe('TOTP_CODE_INVALID');
    expect((await gqlAs(headers, DISABLE, { input: {} })).errors[0].extensions.code).toBe('VAL400');
    expect((await signIn('leaving2fa@team.example', PASSWORD)).body.codeRequired).toBe(true);

    expect((await gqlAs(headers, DISABLE, { input: { password: PASSWORD } })).data.disableTotp).toBe(true);
    expect((await signIn('leaving2fa@team.example', PASSWORD)).status).toBe(200);
    const [row] = await sql('select totp_secret_sealed, totp_last_time_step from merchant_member where id = ?', [id]);
    expect(row).toEqual({ totp_secret_sealed: null, totp_last_time_step: null });
    expect(await sql('select id from member_recovery_code where member_id = ?', [id])).toEqual([]);
    expect((await gqlAs(headers, DISABLE, { input: { password: PASSWORD } })).errors[0].extensions.code).toBe('TOTP_NOT_ENABLED');

    // On again with a new secret, and off with a current code of it.
    const { secret: second } = (await gqlAs(headers, START)).data.startTotpEnrolment;
    expect(second).not.toBe(secret);
    expect((await gqlAs(headers, CONFIRM, { code: await codeAt(second) })).errors).toBeUndefined();
    nextStep();
    expect((await gqlAs(headers, DISABLE, { input: { code: await codeAt(second) } })).data.disableTotp).toBe(true);
    const actions = (await auditEntries()).filter((e) => e.actorLabel === 'leaving2fa@team.example' && String(e.action).startsWith('member.totp'));
    expect(actions.map((e) => e.action)).toEqual(['member.totp_disabled', 'member.totp_enabled', 'member.totp_disabled', 'member.totp_enabled']);
  });
});
