import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { request } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const PASSWORD = 'correct horse battery';

/** A member signs in to the dashboard in Chromium with an email and a password, and switches to live without a key. */
describe('dashboard sign-in of a member, in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;
  let m: CreatedMerchant;

  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Ibadan Prints' });
    // Invited with the live key: Ada works in both environments.
    const invited = await request(t.baseUrl, 'POST', '/graphql', {
      apiKey: m.keys.live.privateKey,
      body: { query: `mutation { inviteMember(input: { email: "ada@prints.example", role: SUPPORT }) { invitationUrl } }` },
    });
    const token = invited.body.data.inviteMember.invitationUrl.split('/').pop();
    const accepted = await request(t.baseUrl, 'POST', '/graphql', {
      body: {
        query: `mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { email } }`,
        variables: { input: { token, password: PASSWORD } },
      },
    });
    expect(accepted.body.errors).toBeUndefined();
    browser = await launchBrowser();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('refuses a wrong password, then signs in with the right one and names the member and role', async () => {
    await page.goto(`${t.baseUrl}/dashboard`);
    await page.getByLabel('Email').fill('ada@prints.example');
    await page.getByLabel('Password').fill('not the right password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').getByText('That email and password do not match').waitFor();

    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Latest orders' }).waitFor();
    await page.getByText('ada@prints.example (support)').waitFor();
    expect(await page.getByText('Ibadan Prints').count()).toBeGreaterThan(0);

    // One sign-in covers both environments: live opens without asking for a key.
    await page.getByRole('group', { name: 'Environment' }).getByRole('button', { name: 'Live' }).click();
    await page.getByText('Live data').waitFor();
    await page.getByRole('heading', { name: 'Latest orders' }).waitFor();
    expect(await page.getByLabel('Private key').count()).toBe(0);
  }, 60_000);
});
