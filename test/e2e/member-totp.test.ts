import type { Browser, Page } from 'playwright-core';
import { generate } from 'otplib';
import { launchBrowser } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { request } from '../support/http';
import { createTestMerchant } from '../support/merchants';

const PASSWORD = 'correct horse battery';
const EMAIL = 'bisi@prints.example';

/** A member turns on two-step sign-in from the dashboard's Security page, then signs in with a code, in Chromium. */
describe('two-step sign-in from the dashboard, in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    t = await startTestService();
    const m = await createTestMerchant(t, { name: 'Lagos Prints' });
    const invited = await request(t.baseUrl, 'POST', '/graphql', {
      apiKey: m.keys.test.privateKey,
      body: { query: `mutation { inviteMember(input: { email: "${EMAIL}", role: VIEWER }) { invitationUrl } }` },
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

  const signIn = async () => {
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };

  it('enrols an authenticator app with the QR code and secret shown, then asks for its code at sign-in', async () => {
    await page.goto(`${t.baseUrl}/dashboard`);
    await signIn();
    await page.getByRole('heading', { name: 'Latest orders' }).waitFor();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Security' }).click();
    await page.getByText('Two-step sign-in is off').waitFor();
    await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
    const qr = page.getByRole('img', { name: 'QR code of your two-step sign-in secret' });
    await qr.waitFor();
    expect(await qr.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
    // The secret as the page shows it, as an app would read it from the QR code.
    const secret = (await page.locator('[data-totp-secret]').innerText()).trim();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);

    await page.getByLabel('Authentication code').fill('000000' === (await generate({ secret })) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Turn on', exact: true }).click();
    await page.getByRole('alert').getByText('That authentication code is not valid').waitFor();

    await page.getByLabel('Authentication code').fill(await generate({ secret }));
    await page.getByRole('button', { name: 'Turn on', exact: true }).click();
    const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
    await codes.first().waitFor();
    expect(await codes.count()).toBe(10);
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByText('10 recovery codes left').waitFor();

    // Signing in again now asks for the code after the password.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn();
    const codeField = page.getByLabel('Authentication code');
    await codeField.waitFor();
    await page.getByRole('alert').getByText('Enter the authentication code').waitFor();
    // The code that turned it on is used up: the app's next one (within the accepted window) signs in.
    await codeField.fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signed in, on the page it signed out of.
    await page.getByText(`${EMAIL} (viewer)`).waitFor();
    await page.getByText('Two-step sign-in is on').waitFor();
  }, 90_000);
});
