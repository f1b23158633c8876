import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { request } from '../support/http';
import { createTestMerchant } from '../support/merchants';

const SCREENSHOTS = path.join(__dirname, '..', '..', 'test-results');

/** A customer pays a payment link in a real browser, through the 3-D Secure page, and lands on the merchant's site. */
describe('hosted checkout in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  let merchantSite: http.Server;
  let merchantUrl: string;
  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    t = await startTestService();
    merchantSite = http.createServer((_req, res) => res.end('<!doctype html><title>Thanks</title><h1>Thank you for your order</h1>'));
    await new Promise<void>((resolve) => merchantSite.listen(0, '127.0.0.1', resolve));
    merchantUrl = `http://127.0.0.1:${(merchantSite.address() as { port: number }).port}/thanks`;
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => merchantSite?.close(resolve));
    await t?.close();
  });

  it('pays with the approved test card through the OTP page and lands on the redirect URL with status=successful', async () => {
    const m = await createTestMerchant(t, { name: 'Lagos Coffee Roasters' });
    const link = (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: {
          Name: 'Bag of beans',
          Description: '1 kg of freshly roasted coffee',
          PaymentType: 'MC',
          AuthOption: 'AUTH',
          Amount: '12500',
          Website: merchantUrl,
        },
      })
    ).body.data.paymentLink;

    const page = await browser.newPage({ viewport: { width: 420, height: 1100 } });
    const consoleErrors: string[] = [];
    page.on('console', (msg) => msg.type() === 'error' && consoleErrors.push(msg.text()));
    await page.goto(link.paymentLinkUrl);
    await expectText(page, 'h1', 'Bag of beans');
    await expectText(page, '.merchant', 'Lagos Coffee Roasters');
    await expectText(page, '[data-testid="amount"]', 'NGN 12,500.00');
    await page.fill('#firstname', 'Ada');
    await page.fill('#lastname', 'Obi');
    await page.fill('#email', 'ada@example.test');
    await page.fill('#mobile', '+2348012345678');
    await page.fill('#cardNumber', '5123 4500 0000 0008');
    await page.fill('#expiryMonth', '12');
    await page.fill('#expiryYear', '30');
    await page.fill('#cvv', '123');
    await page.fill('#street', '1 Marina');
    await page.fill('#city', 'Lagos');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'payment-link-page.png'), fullPage: true });

    // The card leaves the page encrypted only.
    const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url() === link.paymentLinkUrl);
    await page.click('button[type="submit"]');
    const body = (await posted).postData() ?? '';
    expect(body).not.toContain('5123450000000008');
    expect(body).not.toContain('"cvv"');
    expect(JSON.parse(body).data).toMatch(/^[A-Za-z0-9+/]+=*$/);

    await page.waitForURL(/\/sandbox\/3ds\//);
    await expectText(page, 'h1', 'Confirm your payment');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'otp-page.png'), fullPage: true });
    await page.fill('#otp', '123456');
    await page.click('button[type="submit"]');
    await page.waitForURL((url) => url.toString().startsWith(merchantUrl));
    const landed = new URL(page.url());
    expect(landed.searchParams.get('status')).toBe('successful');
    const reference = landed.searchParams.get('reference')!;
    expect(reference).toMatch(/^LNK-/);

    const verify = await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: m.keys.test.privateKey, body: { reference } });
    expect(verify.body.data).toMatchObject({
      statusId: 5,
      status: 'Successful',
      paymentLinkId: link.id,
      paymentLinkReference: link.reference,
      totalAmountCharged: 12500,
    });
    expect(consoleErrors).toEqual([]);
    await page.close();
  }, 60_000);

  it('shows a clear page for an inactive link', async () => {
    const m = await createTestMerchant(t);
    const link = (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: { Name: 'Old offer', Description: 'x', PaymentType: 'SC', AuthOption: 'AUTH' },
      })
    ).body.data.paymentLink;
    await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/status/disable`, { apiKey: m.keys.test.privateKey });
    const page = await browser.newPage();
    const res = await page.goto(link.paymentLinkUrl);
    expect(res?.status()).toBe(404);
    await expectText(page, 'h1', 'This payment link is not active');
    await page.close();
  }, 30_000);
});

async function expectText(page: import('playwright-core').Page, selector: string, text: string): Promise<void> {
  expect((await page.textContent(selector))?.trim()).toBe(text);
}
