import fs from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signInAsOwner } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { postEncrypted, request } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const RESULTS = path.join(__dirname, '..', '..', 'test-results');
const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const card = { cardNumber: '4111111111111111', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing };

let counter = 0;

/**
 * A customer opening a link that cannot take a payment sees why before any card form; the
 * merchant's dashboard names the same states. In real Chromium.
 */
describe('payment link states in Chromium', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let browser: Browser;
  const links: Record<'paid' | 'full' | 'disabled' | 'open', { id: number; reference: string; paymentLinkUrl: string }> = {} as never;

  const createLink = async (body: Record<string, string>) =>
    (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: { Description: 'd', AuthOption: 'NOAUTH', Amount: '2000', ...body },
      })
    ).body.data.paymentLink;
  /** A customer pays the link through the API (no 3-D Secure on these links). */
  const payLink = async (linkId: number) => {
    const reference = `LS-${process.pid}-${Date.now()}-${++counter}`;
    const k = m.keys.test;
    await postEncrypted(t.baseUrl, '/checkout/order/create', k.publicKey, k.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada${counter}@example.test` },
      order: { amount: 2000, reference, description: 'x', currency: 'NGN' },
      payment: { RedirectUrl: 'https://m.test/back', paymentLinkId: linkId },
    });
    const paid = await postEncrypted(t.baseUrl, '/checkout/order/pay', k.publicKey, k.encryptionKey, { reference, paymentOption: 'C', country: 'NG', card });
    expect(paid.body.statusCode).toBe('00');
  };

  beforeAll(async () => {
    fs.mkdirSync(RESULTS, { recursive: true });
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Ikoyi Tickets' });
    links.paid = await createLink({ Name: 'Front row seat', PaymentType: 'SC' });
    await payLink(links.paid.id);
    links.full = await createLink({ Name: 'Workshop', PaymentType: 'MC', Limit: '1' });
    await payLink(links.full.id);
    links.disabled = await createLink({ Name: 'Old offer', PaymentType: 'MC' });
    await request(t.baseUrl, 'PATCH', `/checkout/links/${links.disabled.id}/status/disable`, { apiKey: m.keys.test.privateKey });
    links.open = await createLink({ Name: 'Gallery pass', PaymentType: 'MC', Limit: '2' });
    await payLink(links.open.id);
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function open(url: string): Promise<{ page: Page; status: number | undefined }> {
    const page = await browser.newPage({ viewport: { width: 420, height: 900 } });
    const res = await page.goto(url);
    return { page, status: res?.status() };
  }

  it.each([
    ['a paid single-charge link', 'paid', 410, 'This payment link has been paid'],
    ['a link at its limit', 'full', 410, 'This payment link is closed'],
    ['a disabled link', 'disabled', 404, 'This payment link is not active'],
  ] as const)(
    'shows %s closed, with its reason and before any card form',
    async (_what, key, status, heading) => {
      const { page, status: got } = await open(links[key].paymentLinkUrl);
      try {
        expect(got).toBe(status);
        expect((await page.textContent('h1'))?.trim()).toBe(heading);
        expect(await page.locator('form, input').count()).toBe(0);
        await page.screenshot({ path: path.join(RESULTS, `link-${key}.png`), fullPage: true });
      } finally {
        await page.close();
      }
    },
    30_000,
  );

  it('shows the card form on a limited link that still has room', async () => {
    const { page, status } = await open(links.open.paymentLinkUrl);
    try {
      expect(status).toBe(200);
      await page.locator('#pay-form #cardNumber').waitFor();
    } finally {
      await page.close();
    }
  }, 30_000);

  it('answers each state in GraphQL PaymentLink.status', async () => {
    const res = await request(t.baseUrl, 'POST', '/graphql', {
      apiKey: m.keys.test.privateKey,
      body: { query: '{ paymentLinks(first: 10) { edges { node { name status isActive } } } }' },
    });
    expect(res.body.data.paymentLinks.edges.map((e: { node: unknown }) => e.node)).toEqual([
      { name: 'Gallery pass', status: 'ACTIVE', isActive: true },
      { name: 'Old offer', status: 'DISABLED', isActive: false },
      { name: 'Workshop', status: 'LIMIT_REACHED', isActive: true },
      { name: 'Front row seat', status: 'PAID', isActive: true },
    ]);
    const one = await request(t.baseUrl, 'POST', '/graphql', {
      apiKey: m.keys.test.privateKey,
      body: { query: `{ paymentLink(id: ${links.paid.id}) { status } }` },
    });
    expect(one.body.data.paymentLink).toEqual({ status: 'PAID' });
  });

  it('labels the links Paid, Limit reached, Disabled and Active on the dashboard', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      await signInAsOwner(page, t.baseUrl, m);
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Payment links', exact: true }).click();
      const pill = (name: string) => page.locator('li.link-card', { hasText: name }).locator('.pill');
      await pill('Front row seat').waitFor();
      expect(await pill('Front row seat').textContent()).toBe('Paid');
      expect(await pill('Workshop').textContent()).toBe('Limit reached');
      expect(await pill('Old offer').textContent()).toBe('Disabled');
      expect(await pill('Gallery pass').textContent()).toBe('Active');
      await page.screenshot({ path: path.join(RESULTS, 'dashboard-link-states.png'), fullPage: true });
    } finally {
      await context.close();
    }
  }, 30_000);
});
