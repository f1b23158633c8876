import { cli, cliEnvironment } from '../support/cli';
import { startTestService, type TestService } from '../support/service';
import { request } from '../support/http';
import { startSmtpServer } from '../support/smtp';

describe('CLI merchant:create', () => {
  const env = cliEnvironment('cli');
  let t: TestService;
  beforeAll(async () => {
    env.apply();
    t = await startTestService();
  });
  afterAll(async () => {
    env.restore();
    await t.close();
  });

  it('prints exactly the documented JSON, and the keys it prints authenticate', async () => {
    const { code, out } = await cli([
      'merchant:create',
      '--name',
      'Acme Stores',
      '--country',
      'NG',
      '--email',
      'support@acme.test',
      '--webhook-url',
      'https://acme.test/hooks',
      '--json',
    ]);
    expect(code).toBe(0);
    const printed = JSON.parse(out);
    expect(Object.keys(printed)).toEqual(['subsidiary', 'webhookSecret', 'liveWebhookSecret', 'keys']);
    // Each environment signs with its own secret.
    expect(printed.liveWebhookSecret).not.toBe(printed.webhookSecret);
    expect(printed).toEqual({
      subsidiary: { id: expect.any(Number), name: 'Acme Stores', country: 'NG', supportEmail: 'support@acme.test' },
      webhookSecret: expect.stringMatching(/^whsec_/),
      liveWebhookSecret: expect.stringMatching(/^whsec_/),
      keys: {
        test: {
          publicKey: expect.stringMatching(/^PGW-PUBLICKEY-TEST-[0-9a-f]{32}$/),
          privateKey: expect.stringMatching(/^PGW-SECRETKEY-TEST-[0-9a-f]{32}$/),
          encryptionKey: expect.any(String),
        },
        live: {
          publicKey: expect.stringMatching(/^PGW-PUBLICKEY-LIVE-[0-9a-f]{32}$/),
          privateKey: expect.stringMatching(/^PGW-SECRETKEY-LIVE-[0-9a-f]{32}$/),
          encryptionKey: expect.any(String),
        },
      },
    });
    expect(out.trim().split('\n').length).toBeGreaterThan(1); // one object, pretty-printed, nothing else
    for (const key of [printed.keys.test.publicKey, printed.keys.test.privateKey, printed.keys.live.publicKey, printed.keys.live.privateKey]) {
      expect((await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey: key })).status).toBe(200);
    }
  });

  it('--owner-email invites the first owner: the one JSON object carries the invitation URL, which makes that person an OWNER', async () => {
    const { code, out } = await cli([
      'merchant:create',
      '--name',
      'Owned Ltd',
      '--country',
      'NG',
      '--email',
      'support@owned.test',
      '--owner-email',
      'Boss@Owned.test',
      '--json',
    ]);
    expect(code).toBe(0);
    const printed = JSON.parse(out);
    expect(Object.keys(printed)).toEqual(['subsidiary', 'webhookSecret', 'liveWebhookSecret', 'keys', 'owner']);
    expect(printed.owner).toEqual({ email: 'boss@owned.test', invitationUrl: expect.stringMatching(/\/dashboard\/invitations\/[A-Za-z0-9_-]{43}$/) });
    const token = printed.owner.invitationUrl.split('/').pop();
    const accepted = await request(t.baseUrl, 'POST', '/graphql', {
      body: {
        query: 'mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { email role } }',
        variables: { input: { token, password: 'a long enough password' } },
      },
    });
    expect(accepted.body.data.acceptInvitation).toEqual({ email: 'boss@owned.test', role: 'OWNER' });
    const members = await request(t.baseUrl, 'POST', '/graphql', { apiKey: printed.keys.live.privateKey, body: { query: '{ members { email role } }' } });
    expect(members.body.data.members).toEqual([{ email: 'boss@owned.test', role: 'OWNER' }]);
    // The owner signs in to the dashboard as the owner of the new merchant.
    const signedIn = await request(t.baseUrl, 'POST', '/dashboard/session', { body: { email: 'boss@owned.test', password: 'a long enough password' } });
    expect(signedIn.status).toBe(200);
    expect(signedIn.body).toMatchObject({ merchantName: 'Owned Ltd', member: { email: 'boss@owned.test', role: 'OWNER' } });
  });

  it('--owner-email without --json prints the invitation URL, and with SMTP_URL also emails it before the command exits', async () => {
    const smtp = await startSmtpServer();
    process.env.SMTP_URL = smtp.url;
    try {
      const { code, out } = await cli([
        'merchant:create',
        '--name',
        'Mailed Ltd',
        '--country',
        'NG',
        '--email',
        'support@mailed.test',
        '--owner-email',
        'owner@mailed.test',
      ]);
      expect(code).toBe(0);
      const url = /Owner invitation for owner@mailed\.test \(valid 72 hours, once\): (\S+)/.exec(out)?.[1];
      expect(url).toMatch(/\/dashboard\/invitations\/[A-Za-z0-9_-]{43}$/);
      // Already there when the command has returned: the CLI waits for the email in flight.
      const mails = smtp.received.filter((mail) => mail.to.includes('owner@mailed.test'));
      expect(mails).toHaveLength(1);
      expect(mails[0]!.subject).toContain('Mailed Ltd');
      expect(mails[0]!.text).toContain(url);
    } finally {
      delete process.env.SMTP_URL;
      await smtp.close();
    }
  });

  it('refuses a malformed --owner-email and creates nothing', async () => {
    const res = await cli([
      'merchant:create',
      '--name',
      'Bad Owner',
      '--country',
      'NG',
      '--email',
      'support@bad.test',
      '--owner-email',
      'not an email',
      '--json',
    ]);
    expect(res.code).not.toBe(0);
    expect(res.out).toBe('');
    expect(res.err).toContain('e-mail');
  });

  it.each(['2048', '3072'])(
    'warns on stderr that %s-bit keys break clients encrypting one block, and stdout keeps exactly the one JSON object',
    async (bits) => {
      const res = await cli(['merchant:create', '--name', `Small ${bits}`, '--country', 'NG', '--email', 'small@acme.test', '--key-bits', bits, '--json']);
      expect(res.code).toBe(0);
      const printed = JSON.parse(res.out);
      expect(Object.keys(printed)).toEqual(['subsidiary', 'webhookSecret', 'liveWebhookSecret', 'keys']);
      expect(res.err).toMatch(new RegExp(`^warning: --key-bits ${bits}: .*one block.*need 4096-bit keys`));
      expect(res.err.trim().split('\n')).toHaveLength(1);
    },
  );

  it('prints no warning for 4096-bit keys', async () => {
    const res = await cli(['merchant:create', '--name', 'Big keys', '--country', 'NG', '--email', 'big@acme.test', '--key-bits', '4096', '--json']);
    expect(res.code).toBe(0);
    expect(res.err).toBe('');
  });

  it('explains bad input and exits non-zero', async () => {
    const missing = await cli(['merchant:create', '--name', 'X', '--country', 'NG', '--json']);
    expect(missing).toMatchObject({ code: 65, out: '' });
    expect(missing.err).toContain('The Email field is required.');
    const unknown = await cli(['merchant:create', '--colour', 'red']);
    expect(unknown.code).toBe(64);
    expect(unknown.err).toContain('Usage:');
    expect((await cli(['nonsense'])).code).toBe(64);
  });
});
