import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { request } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const PASSWORD = 'chosen on the invitation page';
const NEW_PASSWORD = 'chosen on the reset page';

/** The dashboard pages of someone not signed in, in Chromium, with a real SMTP server in process receiving the emails. */
describe('invitation, forgotten password and reset pages of the dashboard', () => {
  let smtp: TestSmtpServer;
  let t: TestService;
  let browser: Browser;
  let page: Page;
  let m: CreatedMerchant;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestService({ SMTP_URL: smtp.url });
    m = await createTestMerchant(t, { name: 'Enugu Pottery' });
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
    await smtp?.close();
  });

  const linkIn = (text: string, kind: 'invitations' | 'reset') => new RegExp(`(https?://\\S+/dashboard/${kind}/[A-Za-z0-9_-]+)`).exec(text)?.[1];

  it('accepts an invitation from its emailed link, then signs in; a forgotten password is reset from the emailed link', async () => {
    const invited = await request(t.baseUrl, 'POST', '/graphql', {
      apiKey: m.keys.test.privateKey,
      body: { query: `mutation { inviteMember(input: { email: "chidi@pottery.example", role: DEVELOPER }) { invitationUrl } }` },
    });
    expect(invited.body.errors).toBeUndefined();
    const invitation = linkIn((await smtp.waitForMail('chidi@pottery.example')).text, 'invitations');
    expect(invitation).toBe(invited.body.data.inviteMember.invitationUrl);

    await page.goto(invitation!);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    // The sign-in form, the email filled in.
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe('chidi@pottery.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('chidi@pottery.example (developer)').waitFor();

    // Used once: the same link again is refused on the page.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.goto(invitation!);
    await page.getByLabel('Password').fill('another long password');
    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.getByRole('alert').getByText('This invitation is not valid').waitFor();

    // Forgot password? from the sign-in form.
    await page.goto(`${t.baseUrl}/dashboard`);
    await page.getByRole('link', { name: 'Forgot password?' }).click();
    await page.getByLabel('Email').fill('chidi@pottery.example');
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByRole('status').getByText('a link to choose a new password is on its way').waitFor();
    const reset = linkIn((await smtp.waitForMail('chidi@pottery.example', (mail) => mail.subject.startsWith('Reset'))).text, 'reset');
    expect(reset).toBeDefined();

    await page.goto(reset!);
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.getByLabel('Email').inputValue()).toBe('chidi@pottery.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That email and password do not match').waitFor();
    await page.getByLabel('Password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('chidi@pottery.example (developer)').waitFor();
  }, 90_000);
});
