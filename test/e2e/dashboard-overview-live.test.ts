import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signedInDashboard } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { graphql } from '../support/http';
import { encryptPayload } from '../support/payload-client';
import { createTestMerchant } from '../support/merchants';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };

/** The overview in Chromium: its figures follow the orders as they are paid, without a reload; empty charts say so. */
describe('dashboard overview figures, live', () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;
  let m: CreatedMerchant;

  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Kano Textiles' });
    browser = await launchBrowser();
    page = await signedInDashboard(browser, t.baseUrl, m);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const today = () => page.getByRole('region', { name: 'Today', exact: true });

  it('says "No payments in this period" where a chart has nothing to draw', async () => {
    await today().getByText('No orders in this period.').waitFor();
    const daily = page.getByRole('region', { name: 'Daily volume' });
    await daily.getByText('No payments in this period.').waitFor();
    expect(await daily.locator('canvas').count()).toBe(0);
  }, 30_000);

  it('shows a payment made through the API in the figures without a reload', async () => {
    // The page's subscription is registered with the service before anything is paid.
    const bus = t.service.runtime.ctx.services.orderStatusBus;
    await waitUntil(() => bus.totalSubscribers() === 1);
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    const gql = async (query: string, variables: Record<string, unknown>) =>
      (await graphql(t.baseUrl, query, variables, { 'api-key': m.keys.test.publicKey })).body;
    const reference = `LIVE-${process.pid}-${Date.now()}`;
    const created = await gql(`mutation ($input: CreateOrderInput!) { createOrder(input: $input) { orderReference } }`, {
      input: {
        reference,
        amount: '15000',
        currency: 'NGN',
        description: 'Adire fabric',
        redirectUrl: 'https://merchant.example/done',
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      },
    });
    expect(created.errors).toBeUndefined();
    const payload = encryptPayload(
      { card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing } },
      m.keys.test.encryptionKey,
    );
    const paid = await gql(`mutation ($input: PayOrderInput!) { payOrder(input: $input) { redirectUrl } }`, {
      input: { reference, paymentOption: 'C', country: 'NG', encryptedPayload: payload },
    });
    expect(paid.errors).toBeUndefined();
    const otp = await fetch(paid.data.payOrder.redirectUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'otp=123456',
    });
    expect(otp.status).toBeLessThan(400);

    // The paid order's volume, in the one money format, in today's figures and the daily chart.
    await today().getByRole('cell', { name: 'NGN 15,000.00' }).waitFor({ timeout: 15_000 });
    const row = today().locator('tbody tr', { hasText: 'Card Payment' });
    expect((await row.locator('td').allTextContents()).map((s) => s.trim())).toEqual(['Card Payment', 'NGN 15,000.00', '1', '100%']);
    await page.getByRole('region', { name: 'Daily volume' }).locator('canvas').waitFor();
    await page.locator('section[aria-labelledby="latest-heading"] tbody tr', { hasText: reference }).waitFor();
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
  }, 60_000);
});

/** Checks the condition each time the event loop turns, until it holds. */
async function waitUntil(condition: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}
