import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signedInDashboard } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { graphql } from '../support/http';
import { encryptPayload } from '../support/payload-client';
import { createTestMerchant } from '../support/merchants';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const customer = { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' };

/**
 * What a merchant notices on the dashboard, in Chromium: the link form (one request while
 * sending, empty again after), amounts in the one money format, links by their name, order
 * statuses in the API's words.
 */
describe('dashboard links and orders in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;
  let m: CreatedMerchant;
  const gql = async (query: string, variables: Record<string, unknown> = {}, apiKey = m.keys.test.privateKey) =>
    (await graphql(t.baseUrl, query, variables, { 'api-key': apiKey })).body;
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });

  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Ibadan Weavers' });
    browser = await launchBrowser();
    page = await signedInDashboard(browser, t.baseUrl, m);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('"Create link" is disabled while sending, sends once, and leaves the form empty after the link is created', async () => {
    await nav('Payment links').click();
    await page.getByRole('link', { name: 'New payment link' }).click();
    await page.getByLabel('Multiple charge').check();
    await page.getByLabel('Name').fill('Indigo scarf');
    await page.getByLabel('Description').fill('Hand-dyed adire');
    await page.getByLabel(/^Amount/).fill('1234567.5');
    await page.getByLabel(/^Limit/).fill('3');
    await page.locator('.rules').getByText('Every payment is NGN 1,234,567.50.').waitFor();

    // The create request is held until the button has been seen disabled.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let arrived!: () => void;
    const sent = new Promise<void>((resolve) => (arrived = resolve));
    await page.route('**/graphql', async (route) => {
      if (route.request().postData()?.includes('createPaymentLink')) {
        arrived();
        await held;
      }
      await route.continue();
    });
    await page.getByRole('button', { name: 'Create link' }).click();
    await sent;
    const sending = page.getByRole('button', { name: 'Creating link…' });
    expect(await sending.isDisabled()).toBe(true);
    // Enter in a field does not send it again while the first is on its way.
    await page.getByLabel('Name').press('Enter');
    release();
    await page.getByRole('status').getByText('Indigo scarf').waitFor();
    await page.unroute('**/graphql');

    expect(await page.getByLabel('Name').inputValue()).toBe('');
    expect(await page.getByLabel('Description').inputValue()).toBe('');
    expect(await page.getByLabel(/^Amount/).inputValue()).toBe('');
    expect(await page.getByLabel('Single charge').isChecked()).toBe(true);
    expect(await page.getByLabel(/^Limit/).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Create link' }).isEnabled()).toBe(true);

    const links = await gql('{ paymentLinks { edges { node { name amount limit paymentLinkCode } } } }');
    expect(links.data.paymentLinks.edges.map((e: { node: unknown }) => e.node)).toEqual([
      { name: 'Indigo scarf', amount: '1234567.50', limit: 3, paymentLinkCode: 'MC' },
    ]);
  }, 60_000);

  it('shows amounts as "NGN 15,000.00", links by their name and statuses in the API\'s words', async () => {
    const link = (await gql('{ paymentLinks { edges { node { id } } } }')).data.paymentLinks.edges[0].node;
    const onLink = `ORD-LINK-${process.pid}-${Date.now()}`;
    const plain = `ORD-PLAIN-${process.pid}-${Date.now()}`;
    const create = `mutation ($input: CreateOrderInput!) { createOrder(input: $input) { orderReference } }`;
    for (const input of [
      { reference: onLink, amount: '1234567.50', paymentLinkId: link.id },
      { reference: plain, amount: '15000', description: 'Wholesale order' },
    ]) {
      const created = await gql(
        create,
        { input: { ...input, currency: 'NGN', redirectUrl: 'https://merchant.example/done', customer } },
        m.keys.test.publicKey,
      );
      expect(created.errors).toBeUndefined();
    }
    const payload = encryptPayload(
      { card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing } },
      m.keys.test.encryptionKey,
    );
    const paid = await gql(
      `mutation ($input: PayOrderInput!) { payOrder(input: $input) { order { status } } }`,
      { input: { reference: onLink, paymentOption: 'C', country: 'NG', encryptedPayload: payload } },
      m.keys.test.publicKey,
    );
    expect(paid.errors).toBeUndefined();
    const apiStatus: string = paid.data.payOrder.order.status;

    // The orders list: one money format, the API's status words (as a label: first letter capital).
    await nav('Orders').click();
    const plainRow = page.locator(`tr[data-reference="${plain}"]`);
    const linkRow = page.locator(`tr[data-reference="${onLink}"]`);
    await plainRow.waitFor();
    expect((await plainRow.locator('td').nth(2).textContent())!.trim()).toBe('NGN 15,000.00');
    expect((await plainRow.locator('td').nth(1).textContent())!.trim()).toBe('Initiated');
    expect((await linkRow.locator('td').nth(2).textContent())!.trim()).toBe('NGN 1,234,567.50');
    const shownStatus = (await linkRow.locator('td').nth(1).textContent())!.trim();
    expect(shownStatus).toBe('Pending authentication');
    expect(shownStatus.toLowerCase()).toBe(apiStatus.toLowerCase());
    const filterWords = (await page.getByLabel('Status').locator('option').allTextContents()).map((s) => s.trim());
    expect(filterWords).toEqual(['Any status', 'Initiated', 'Pending authentication', 'Processing', 'Failed', 'Successful', 'Authorized', 'Voided']);

    // A link's orders are headed by the link's name, not its id.
    await nav('Payment links').click();
    await page.getByRole('link', { name: 'Orders of Indigo scarf' }).click();
    await page.getByText('Showing the orders of the payment link “Indigo scarf”.').waitFor();
    await linkRow.waitFor();
    expect(await page.locator('tbody tr').count()).toBe(1);

    // The order's page names its link too, and shows its amounts in the same format.
    await linkRow.getByRole('link', { name: onLink }).click();
    const details = page.locator('dl.details');
    await details.waitFor();
    const field = async (name: string) => (await details.locator(`dt:text-is("${name}") + dd`).textContent())!.trim();
    expect(await field('Payment link')).toBe('Indigo scarf');
    expect(await field('Amount')).toBe('NGN 1,234,567.50');
    expect((await page.locator('.order-status .status').textContent())!.trim()).toBe('Pending authentication');
  }, 60_000);
});
