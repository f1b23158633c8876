import { Writable } from 'node:stream';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp';
import { waitFor } from '../events/helpers';
import { loggerOptions } from '../../../src/app';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const PASSWORD = 'a password from the email';
const INVITE = `mutation ($input: InviteMemberInput!) { inviteMember(input: $input) { email role invitationUrl expiresAt } }`;
const ACCEPT = `mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { email role } }`;

const gql = async (t: TestService, apiKey: string | undefined, query: string, variables: Record<string, unknown> = {}) =>
  (await request(t.baseUrl, 'POST', '/graphql', { apiKey, body: { query, variables } })).body;

/** Invitations by email: a real SMTP server in this process receives what the service sends. */
describe('invitations sent by email when SMTP_URL is set', () => {
  let smtp: TestSmtpServer;
  let t: TestService;
  const raw: string[] = [];
  const logLines = () =>
    raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);

  beforeAll(async () => {
    smtp = await startSmtpServer();
    const stream = new Writable({
      write(chunk, _enc, done) {
        raw.push(chunk.toString());
        done();
      },
    });
    t = await startTestService(
      { SMTP_URL: `smtp://mailer:secret@${smtp.url.slice('smtp://'.length)}`, SMTP_FROM: 'Gateway Team <team@gateway.test>' },
      { logger: { ...(loggerOptions('info') as object), stream } },
    );
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('emails the invitation naming the merchant, the role, the link and its expiry; the link from the email makes a member who signs in', async () => {
    const m = await createTestMerchant(t, { name: 'Lagos Linens' });
    const invited = await gql(t, m.keys.test.privateKey, INVITE, { input: { email: 'Ngozi@Linens.test', role: 'ADMIN' } });
    expect(invited.errors).toBeUndefined();
    const invitation = invited.data.inviteMember;

    const mail = await smtp.waitForMail('ngozi@linens.test');
    expect(mail.from).toBe('team@gateway.test');
    expect(mail.subject).toContain('Lagos Linens');
    const expiry = new Date(invitation.expiresAt).toUTCString();
    for (const body of [mail.text, mail.html]) {
      expect(body).toContain('Lagos Linens');
      expect(body).toContain('ADMIN');
      expect(body).toContain(expiry);
    }
    expect(mail.html).toContain(`href="${invitation.invitationUrl}"`);

    // What a person does: follows the link in the email.
    const link = /(https?:\/\/\S+\/dashboard\/invitations\/[A-Za-z0-9_-]+)/.exec(mail.text)?.[1];
    expect(link).toBe(invitation.invitationUrl);
    const accepted = await gql(t, undefined, ACCEPT, { input: { token: new URL(link!).pathname.split('/').pop(), password: PASSWORD } });
    expect(accepted.data.acceptInvitation).toEqual({ email: 'ngozi@linens.test', role: 'ADMIN' });
    const signedIn = await request(t.baseUrl, 'POST', '/dashboard/session', { body: { email: 'ngozi@linens.test', password: PASSWORD } });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toMatchObject({ merchantName: 'Lagos Linens', member: { email: 'ngozi@linens.test', role: 'ADMIN' } });
    expect(logLines()).toContainEqual(expect.objectContaining({ event: 'email.sent', kind: 'invitation', subsidiaryId: m.subsidiary.id, msg: 'email sent' }));
  });

  it('emails the first owner invited when a merchant is created with an owner email', async () => {
    const created = await t.service.runtime.ctx.services.merchants.createMerchant({
      name: 'Kano Crafts',
      country: 'NG',
      supportEmail: 'support@crafts.test',
      ownerEmail: 'founder@crafts.test',
    });
    const mail = await smtp.waitForMail('founder@crafts.test');
    expect(mail.subject).toContain('Kano Crafts');
    expect(mail.text).toContain('OWNER');
    expect(mail.text).toContain(created.owner!.invitationUrl);
  });

  it('a failed send never fails the invitation: the URL is answered, the failure is logged as a business event and recorded in the audit log', async () => {
    const m = await createTestMerchant(t);
    smtp.refuse(true);
    try {
      const invited = await gql(t, m.keys.test.privateKey, INVITE, { input: { email: 'bounce@linens.test', role: 'VIEWER' } });
      expect(invited.errors).toBeUndefined();
      expect(invited.data.inviteMember.invitationUrl).toMatch(/\/dashboard\/invitations\/[A-Za-z0-9_-]{43}$/);
      const entries = await waitFor(async () => {
        const rows: { action: string; actor_type: string; target: string }[] = await t.service.runtime.ctx.orm.em
          .fork()
          .getConnection()
          .execute(`select action, actor_type, target from audit_entry where subsidiary_id = ? and action = 'email.failed'`, [m.subsidiary.id]);
        return rows.length > 0 && rows;
      }, 15_000);
      expect(entries).toEqual([{ action: 'email.failed', actor_type: 'SYSTEM', target: 'invitation email to bounce@linens.test' }]);
      expect(logLines()).toContainEqual(
        expect.objectContaining({
          level: 40,
          event: 'email.failed',
          kind: 'invitation',
          subsidiaryId: m.subsidiary.id,
          reason: expect.stringContaining('554'),
        }),
      );
      // The invitation itself works.
      const token = invited.data.inviteMember.invitationUrl.split('/').pop();
      expect((await gql(t, undefined, ACCEPT, { input: { token, password: PASSWORD } })).data.acceptInvitation.email).toBe('bounce@linens.test');
    } finally {
      smtp.refuse(false);
    }
    expect(smtp.received.filter((r) => r.to.includes('bounce@linens.test'))).toEqual([]);
  });
});

describe('no email without SMTP_URL', () => {
  let smtp: TestSmtpServer;
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestService();
    m = await createTestMerchant(t);
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  it('answers the invitation URL and sends nothing', async () => {
    const invited = await gql(t, m.keys.test.privateKey, INVITE, { input: { email: 'quiet@linens.test', role: 'VIEWER' } });
    expect(invited.data.inviteMember.invitationUrl).toContain('/dashboard/invitations/');
    await t.service.runtime.ctx.services.teamMail.settled();
    expect(t.service.runtime.ctx.services.teamMail.enabled).toBe(false);
    expect(smtp.received).toEqual([]);
  });
});
