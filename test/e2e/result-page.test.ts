import type { Browser, Page } from 'playwright-core';
import { launchBrowser } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { postEncrypted, request } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const card = (cardNumber: string) => ({ cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing });
const WEBSITE = 'https://shop.test/thanks?from=link&tab=1';

let counter = 0;

/** The hosted result page tells the order's real state, whatever `status` its address carries. */
describe('payment result page', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let browser: Browser;
  let link: { id: number; reference: string; paymentLinkUrl: string };
  let other: { id: number; reference: string; paymentLinkUrl: string };
  const orders = { paid: '', failed: '', pending: '' };

  const createLink = async (body: Record<string, string>) =>
    (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: { Description: 'd', AuthOption: 'NOAUTH', PaymentType: 'MC', Amount: '15000', ...body },
      })
    ).body.data.paymentLink;
  /** An order on the link through the API, paid with `cardNumber` (no 3-D Secure on these links), or left unpaid. */
  const orderOn = async (linkId: number, cardNumber: string | null) => {
    const reference = `RP-${process.pid}-${++counter}`;
    const k = m.keys.test;
    const created = await postEncrypted(t.baseUrl, '/checkout/order/create', k.publicKey, k.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada${counter}@example.test` },
      order: { amount: '15000', reference, description: 'x', currency: 'NGN' },
      payment: { RedirectUrl: 'https://m.test/back', paymentLinkId: linkId },
    });
    expect(created.body).toMatchObject({ status: 'success' });
    if (cardNumber)
      await postEncrypted(t.baseUrl, '/checkout/order/pay', k.publicKey, k.encryptionKey, {
        reference,
        paymentOption: 'C',
        country: 'NG',
        card: card(cardNumber),
      });
    return reference;
  };
  const statusOf = async (reference: string) =>
    (await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: m.keys.test.privateKey, body: { reference } })).body.data;
  const resultPath = (linkRef: string, orderRef: string, status: string) => `/pay/${linkRef}/result?reference=${encodeURIComponent(orderRef)}&status=${status}`;

  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Ikoyi Tickets' });
    link = await createLink({ Name: 'Concert ticket', Website: WEBSITE });
    other = await createLink({ Name: 'Other offer' });
    orders.paid = await orderOn(link.id, '4111111111111111');
    orders.failed = await orderOn(link.id, '4000000000000069');
    orders.pending = await orderOn(link.id, null);
    expect((await statusOf(orders.paid)).status).toBe('Successful');
    expect((await statusOf(orders.failed)).status).toBe('Failed');
    expect((await statusOf(orders.pending)).status).toBe('Initiated');
    browser = await launchBrowser();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  async function open(path: string, run: (page: Page, status: number | undefined) => Promise<void>): Promise<void> {
    const page = await browser.newPage({ viewport: { width: 420, height: 900 } });
    try {
      const res = await page.goto(`${t.baseUrl}${path}`);
      await run(page, res?.status());
    } finally {
      await page.close();
    }
  }

  it('says not found (404) for an order that does not exist, even with status=successful in the address', async () => {
    await open(resultPath(link.reference, 'LNK-NOPE', 'successful'), async (page, status) => {
      expect(status).toBe(404);
      expect((await page.textContent('h1'))?.trim()).toBe('Payment not found');
      expect(await page.textContent('body')).not.toContain('successful');
    });
  }, 30_000);

  it('shows a paid order as successful with the amount paid and the way back to the merchant, even with status=failed', async () => {
    await open(resultPath(link.reference, orders.paid, 'failed'), async (page, status) => {
      expect(status).toBe(200);
      expect((await page.textContent('h1'))?.trim()).toBe('Payment successful');
      expect((await page.textContent('[data-testid="amount"]'))?.trim()).toBe('NGN 15,000.00');
      expect((await page.textContent('[data-testid="reference"]'))?.trim()).toBe(orders.paid);
      expect(await page.getAttribute('[data-testid="back"]', 'href')).toBe(WEBSITE);
      expect((await page.textContent('[data-testid="back"]'))?.trim()).toBe('Return to Ikoyi Tickets');
      expect(await page.textContent('body')).not.toContain('No money was taken');
    });
  }, 30_000);

  it('says no money was taken for a failed order, even with status=successful', async () => {
    const res = await request(t.baseUrl, 'GET', resultPath(link.reference, orders.failed, 'successful'));
    expect(res.status).toBe(200);
    expect(res.text).toContain('<h1 class="bad" data-outcome="failed">Payment failed</h1>');
    expect(res.text).toContain('No money was taken.');
    expect(res.text).not.toContain('Payment successful');
    // The website's `&` is escaped in the page.
    expect(res.text).toContain('href="https://shop.test/thanks?from=link&amp;tab=1"');
  });

  it('says a pending order is in progress, whatever the address claims', async () => {
    for (const claimed of ['successful', 'failed']) {
      const res = await request(t.baseUrl, 'GET', resultPath(link.reference, orders.pending, claimed));
      expect(res.status).toBe(200);
      expect(res.text).toContain('Your payment is in progress');
      expect(res.text).not.toContain('Payment successful');
      expect(res.text).not.toContain('No money was taken');
    }
  });

  it('finds nothing for an order of another link, an unknown link or no order reference', async () => {
    for (const path of [
      resultPath(other.reference, orders.paid, 'successful'),
      resultPath('NO-SUCH-LINK', orders.paid, 'successful'),
      `/pay/${link.reference}/result?status=successful`,
    ]) {
      const res = await request(t.baseUrl, 'GET', path);
      expect(res.status).toBe(404);
      expect(res.text).toContain('Payment not found');
      expect(res.text).not.toContain('Payment successful');
    }
  });
});
