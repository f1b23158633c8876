import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signedInDashboard, signInAsMember } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { graphql, request } from '../support/http';
import { encryptPayload } from '../support/payload-client';
import { createTestMerchant } from '../support/merchants';
import { addMember } from '../support/members';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const customer = { firstname: 'Ada', lastname: 'Obi', email: 'ada@example.test', mobile: '+2348012345678', country: 'NG' };
const CREATE_LINK = `mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { reference } }`;
const ORDER = `query ($reference: String!) { order(reference: $reference) { statusId status amount amountAuthorized } }`;

/**
 * Capture later on an order's page, in Chromium: an owner captures less than was authorized and
 * voids another held payment, each after a confirmation naming the amount; the statuses Authorized
 * and Voided are in the list and its filter; a viewer sees the held payment but neither button.
 */
describe('dashboard capture and void in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;
  let m: CreatedMerchant;
  let linkReference: string;
  const gql = async (query: string, variables: Record<string, unknown>) =>
    (await graphql(t.baseUrl, query, variables, { 'api-key': m.keys.test.privateKey })).body;
  const orderOf = async (reference: string) => (await gql(ORDER, { reference })).data.order;
  /** The merchant keys the order's captures and voids were asked with. */
  const keysOf = async (reference: string) =>
    (
      (await t.service.runtime.ctx.orm.em
        .getConnection()
        .execute(`select a.merchant_key from authorization_action a join checkout_order o on o.id = a.order_id where o.reference = ?`, [reference])) as Array<{
        merchant_key: string | null;
      }>
    ).map((r) => r.merchant_key);
  const button = (p: Page, name: string) => p.getByRole('button', { name, exact: true });
  const shownStatus = async (p: Page) => (await p.locator('.order-status .status').textContent())!.trim();

  /** A customer pays the MANUAL link's hosted page with a card without 3-D Secure: the order is Authorized. */
  async function heldOrder(): Promise<string> {
    const res = await request(t.baseUrl, 'POST', `/pay/${linkReference}`, {
      body: {
        paymentOption: 'C',
        customer,
        data: encryptPayload(
          { card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing } },
          m.keys.test.encryptionKey,
        ),
      },
    });
    expect(res.status).toBe(200);
    const reference = new URL(res.body.redirectUrl).searchParams.get('reference')!;
    expect((await orderOf(reference)).status).toBe('Authorized');
    return reference;
  }
  async function openOrder(p: Page, reference: string): Promise<void> {
    await p.goto(`${t.baseUrl}/dashboard/orders/${encodeURIComponent(reference)}`);
    await p.getByRole('heading', { name: 'Refunds' }).waitFor();
  }

  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Jos Outfitters' });
    const link = await gql(CREATE_LINK, {
      input: {
        name: 'Tent',
        description: 'Held until shipped',
        paymentType: 'MC',
        currency: 'NGN',
        authOption: 'NOAUTH',
        amount: '1000',
        captureMethod: 'MANUAL',
      },
    });
    linkReference = link.data.createPaymentLink.reference;
    browser = await launchBrowser();
    page = await signedInDashboard(browser, t.baseUrl, m);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('an owner captures less than was authorized, after a confirmation; the order becomes Successful and can be refunded', async () => {
    const reference = await heldOrder();
    await openOrder(page, reference);
    await page.getByRole('heading', { name: 'Held payment' }).waitFor();
    expect(await shownStatus(page)).toBe('Authorized');
    expect(await page.locator('[data-field="amount-held"]').textContent()).toBe('NGN 1,000.00');
    expect(await button(page, 'Refund').count()).toBe(0);

    await button(page, 'Capture').click();
    const amount = page.getByLabel('Amount to capture (NGN)');
    expect(await amount.inputValue()).toBe('1000.00'); // all of it unless changed
    await amount.fill('600');
    await button(page, 'Continue').click();
    const question = page.getByRole('alertdialog');
    expect((await question.locator('p').textContent())!.trim()).toBe("Capture NGN 600.00 from the customer's card?");
    expect((await orderOf(reference)).statusId).toBe(6); // nothing sent before the confirmation
    await question.getByRole('button', { name: 'Confirm capture' }).dblclick();

    await page.getByRole('status').getByText('Captured NGN 600.00.').waitFor();
    expect(await orderOf(reference)).toEqual({ statusId: 5, status: 'Successful', amount: '600.00', amountAuthorized: '1000.00' });
    // The capture carried the form's own idempotency key.
    expect(await keysOf(reference)).toEqual([expect.stringMatching(/^dashboard-[0-9a-f]{32}$/)]);
    await page.locator('.order-status').getByText('Successful').waitFor();
    expect(await button(page, 'Capture').count()).toBe(0);
    expect(await button(page, 'Void').count()).toBe(0);
    // What was taken can be refunded now.
    await button(page, 'Refund').waitFor();
    expect(await page.locator('[data-field="amount-refundable"]').textContent()).toBe('NGN 600.00');
  }, 60_000);

  it('an owner voids a held payment after a confirmation; Authorized and Voided are statuses of the order list and its filter', async () => {
    const reference = await heldOrder();
    await openOrder(page, reference);
    await button(page, 'Void').click();
    const question = page.getByRole('alertdialog');
    expect((await question.locator('p').textContent())!.trim()).toBe("Void this payment and release the NGN 1,000.00 held on the customer's card?");
    await question.getByRole('button', { name: 'Confirm void' }).click();
    await page.getByRole('status').getByText("Voided: the NGN 1,000.00 held on the customer's card is released.").waitFor();
    await page.locator('.order-status').getByText('Voided').waitFor();
    expect((await orderOf(reference)).statusId).toBe(7);
    expect(await keysOf(reference)).toEqual([expect.stringMatching(/^dashboard-[0-9a-f]{32}$/)]);

    const held = await heldOrder();
    await page.goto(`${t.baseUrl}/dashboard/orders`);
    const status = page.getByLabel('Status');
    await status.waitFor();
    expect((await status.locator('option').allTextContents()).map((s) => s.trim())).toEqual(expect.arrayContaining(['Authorized', 'Voided']));
    expect((await page.locator(`tr[data-reference="${held}"] td`).nth(1).textContent())!.trim()).toBe('Authorized');
    await status.selectOption({ label: 'Voided' });
    await button(page, 'Apply filters').click();
    await page.getByText('1 order', { exact: true }).waitFor();
    expect((await page.locator(`tr[data-reference="${reference}"] td`).nth(1).textContent())!.trim()).toBe('Voided');
  }, 60_000);

  it('a VIEWER sees a held payment but neither "Capture" nor "Void"', async () => {
    const reference = await heldOrder();
    const viewer = await addMember(t.baseUrl, m.keys.test.privateKey, `viewer-${m.subsidiary.id}@merchant.test`, 'VIEWER');
    const viewerPage = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
    await signInAsMember(viewerPage, t.baseUrl, viewer);
    await viewerPage.getByRole('heading', { name: 'Latest orders' }).waitFor();
    await openOrder(viewerPage, reference);
    await viewerPage.getByRole('heading', { name: 'Held payment' }).waitFor();
    expect(await button(viewerPage, 'Capture').count()).toBe(0);
    expect(await button(viewerPage, 'Void').count()).toBe(0);
    await openOrder(page, reference);
    await button(page, 'Capture').waitFor();
    await button(page, 'Void').waitFor();
  }, 60_000);
});
