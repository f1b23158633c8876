import type { Browser } from 'playwright-core';
import { launchBrowser } from '../../support/browser';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';

/** Swagger UI in a real browser: it renders the document and loads nothing from another origin. */
describe('REST: Swagger UI in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestService();
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('renders every operation from /docs with assets of this origin only, and tries a call with the api-key', async () => {
    const m = await createTestMerchant(t);
    const page = await browser.newPage();
    const origin = new URL(t.baseUrl).origin;
    const foreign: string[] = [];
    const cspViolations: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.protocol.startsWith('http') && url.origin !== origin) foreign.push(r.url());
    });
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
    await page.goto(`${t.baseUrl}/docs`);
    await page.getByText('Create a payment link; private key only', { exact: true }).waitFor({ timeout: 30_000 });
    for (const summary of ['List banks', 'Pay an order by card or PayPal (Encrypted)', 'Cancel a recurring payment (subscription); private key only']) {
      await page.getByText(summary, { exact: true }).waitFor();
    }

    // Authorize with the api-key scheme, then "Try it out" on GET /checkout/banks.
    await page
      .getByRole('button', { name: /Authorize/ })
      .first()
      .click();
    await page.locator('.modal-ux input[type=text]').fill(m.keys.test.publicKey);
    await page.locator('.modal-ux button.modal-btn.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();
    const banks = page.locator('#operations-Banks-get_checkout_banks');
    await banks.locator('.opblock-summary').click();
    await banks.getByRole('button', { name: 'Try it out' }).click();
    const answer = page.waitForResponse((r) => r.url().endsWith('/checkout/banks'));
    await banks.getByRole('button', { name: 'Execute' }).click();
    const res = await answer;
    expect(res.status()).toBe(200);
    expect(res.request().headers()['api-key']).toBe(m.keys.test.publicKey);

    expect(foreign).toEqual([]);
    expect(cspViolations).toEqual([]);
    await page.close();
  }, 90_000);
});
