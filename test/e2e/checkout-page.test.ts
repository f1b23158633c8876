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
    await page.fill('#expiry', '12 / 30');
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

  it('groups the card number as typed with its brand, checks each field next to it, and offers autofill', async () => {
    const m = await createTestMerchant(t, { name: 'Ikeja Books' });
    const link = (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: { Name: 'Novel', Description: 'A book', PaymentType: 'MC', AuthOption: 'AUTH', Amount: '15000' },
      })
    ).body.data.paymentLink;
    const page = await browser.newPage({ viewport: { width: 420, height: 1100 } });
    const posts: string[] = [];
    page.on('request', (r) => r.method() === 'POST' && posts.push(r.url()));
    await page.goto(link.paymentLinkUrl);
    const card = page.locator('#cardNumber');

    await card.pressSequentially('4111111111111111');
    expect(await card.inputValue()).toBe('4111 1111 1111 1111');
    expect((await page.textContent('#card-brand'))?.trim()).toBe('Visa');
    await card.fill('');
    await card.pressSequentially('378282246310005');
    expect(await card.inputValue()).toBe('3782 822463 10005');
    expect((await page.textContent('#card-brand'))?.trim()).toBe('American Express');
    await card.fill('');
    await card.pressSequentially('5123450000000008');
    expect(await card.inputValue()).toBe('5123 4500 0000 0008');
    expect((await page.textContent('#card-brand'))?.trim()).toBe('Mastercard');
    await page.locator('#expiry').pressSequentially('1230');
    expect(await page.inputValue('#expiry')).toBe('12 / 30');

    // Autofill and the numeric keyboard; the card fields carry no name, so no plain form post can hold them.
    const attrs = (id: string) =>
      page.$eval(`#${id}`, (el) => ({ autocomplete: el.getAttribute('autocomplete'), inputmode: el.getAttribute('inputmode'), name: el.getAttribute('name') }));
    expect(await attrs('cardNumber')).toEqual({ autocomplete: 'cc-number', inputmode: 'numeric', name: null });
    expect(await attrs('expiry')).toEqual({ autocomplete: 'cc-exp', inputmode: 'numeric', name: null });
    expect(await attrs('cvv')).toEqual({ autocomplete: 'cc-csc', inputmode: 'numeric', name: null });
    expect((await attrs('email')).autocomplete).toBe('email');
    expect((await attrs('mobile')).autocomplete).toBe('tel');
    expect((await attrs('zipcode')).autocomplete).toBe('postal-code');
    expect(await page.locator('#expiryMonth, #expiryYear').count()).toBe(0);

    // Countries by name, the ISO code as the value.
    const countries = await page.$$eval('#country option', (os) => os.map((o) => ({ value: (o as HTMLOptionElement).value, text: o.textContent })));
    expect(countries).toContainEqual({ value: 'NG', text: 'Nigeria' });
    expect(countries).toContainEqual({ value: 'GB', text: 'United Kingdom' });
    expect(countries.every((c) => /^[A-Z]{2}$/.test(c.value) && c.text !== c.value)).toBe(true);
    expect(await page.$eval('#billingCountry', (el) => (el as HTMLSelectElement).selectedOptions[0]!.textContent)).toBe('Nigeria');

    // Optional billing fields say so; required ones do not.
    const label = (id: string) => page.textContent(`label[for="${id}"]`);
    expect(await label('state')).toBe('State (optional)');
    expect(await label('zipcode')).toBe('Postal code (optional)');
    expect(await label('street')).toBe('Street');

    // One style for every control.
    const look = (selector: string) =>
      page.$eval(selector, (el) => {
        const s = getComputedStyle(el);
        return { height: s.height, radius: s.borderRadius, border: s.borderTopColor, font: s.fontSize };
      });
    expect(await look('#country')).toEqual(await look('#email'));
    expect(await look('#billingCountry')).toEqual(await look('#cardNumber'));

    // An impossible expiry is refused next to its field, in plain words, and nothing is sent.
    await page.fill('#firstname', 'Ada');
    await page.fill('#lastname', 'Obi');
    await page.fill('#email', 'ada@example.test');
    await page.fill('#mobile', '+2348012345678');
    await page.fill('#expiry', '13 / 30');
    await page.fill('#cvv', '123');
    await page.fill('#street', '1 Marina');
    await page.fill('#city', 'Lagos');
    await page.click('button[type="submit"]');
    const expiryField = page.locator('.field', { has: page.locator('#expiry') });
    expect((await expiryField.locator('.field-error').textContent())?.trim()).toBe('Check the expiry date: month / year, like 08 / 27');
    expect(await page.getAttribute('#expiry', 'aria-invalid')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('expiry');
    expect(await page.locator('.field-error:not(:empty)').count()).toBe(1);

    await page.fill('#expiry', '01 / 20');
    await page.fill('#cardNumber', '4111 1111 1111 1112');
    await page.click('button[type="submit"]');
    expect((await expiryField.locator('.field-error').textContent())?.trim()).toBe('This card has expired');
    const cardField = page.locator('.field', { has: page.locator('#cardNumber') });
    expect((await cardField.locator('.field-error').textContent())?.trim()).toBe('Check the card number');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'payment-link-field-errors.png'), fullPage: true });
    expect(posts).toEqual([]);
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
