import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signedInDashboard, signInAsMember } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { graphql } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import { addMember } from '../support/members';
import { payOrder } from '../integration/events/helpers';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const ORDER = `query ($reference: String!) { order(reference: $reference) { amountRefunded amountRefundable refunds { amount status reason } } }`;
let counter = 0;

/**
 * Refunds on an order's page, in Chromium: an owner refunds part of a paid order after a
 * confirmation naming the amount, sees the answer, the refund in the list and the balance left;
 * a double click, or sending again after a lost answer, refunds once; a viewer sees the refunds
 * but no "Refund"; the overview shows the refunded volume.
 */
describe('dashboard refunds in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;
  let m: CreatedMerchant;
  const orderOf = async (reference: string) =>
    (await graphql(t.baseUrl, ORDER, { reference }, { 'api-key': m.keys.test.privateKey })).body.data.order as {
      amountRefunded: string;
      amountRefundable: string;
      refunds: Array<{ amount: string; status: string; reason: string | null }>;
    };
  const paid = () => payOrder(t.baseUrl, m.keys.test, '5123450000000008', `RF-UI-${process.pid}-${Date.now()}-${++counter}`);
  const total = (p: Page, name: 'amount-refunded' | 'amount-refundable') => p.locator(`[data-field="${name}"]`);
  const refundButton = (p: Page) => p.getByRole('button', { name: 'Refund', exact: true });
  async function openOrder(p: Page, reference: string): Promise<void> {
    await p.goto(`${t.baseUrl}/dashboard/orders/${encodeURIComponent(reference)}`);
    await p.getByRole('heading', { name: 'Refunds' }).waitFor();
  }

  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Kano Leatherworks' });
    browser = await launchBrowser();
    page = await signedInDashboard(browser, t.baseUrl, m);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  let partlyRefunded: string;

  it('an owner refunds part of a paid order: a confirmation names the amount, the answer, the refund and the balance left are shown', async () => {
    partlyRefunded = await paid();
    await openOrder(page, partlyRefunded);
    expect(await total(page, 'amount-refunded').textContent()).toBe('NGN 0.00');
    expect(await total(page, 'amount-refundable').textContent()).toBe('NGN 1,000.00');
    await page.getByText('No refunds.').waitFor();

    await refundButton(page).click();
    const amount = page.getByLabel('Amount to refund (NGN)');
    expect(await amount.inputValue()).toBe('1000.00'); // all that remains, to edit for part of it
    await amount.fill('250.5');
    await page.getByLabel('Reason (optional)').fill('Damaged in transit');
    await page.getByRole('button', { name: 'Continue' }).click();
    const question = page.getByRole('alertdialog');
    expect((await question.locator('p').textContent())!.trim()).toBe('Refund NGN 250.50 to the customer?');
    // Nothing is sent before the confirmation.
    expect((await orderOf(partlyRefunded)).refunds).toEqual([]);
    await question.getByRole('button', { name: 'Confirm refund' }).click();

    await page.getByRole('status').getByText('Refunded NGN 250.50 to the customer.').waitFor();
    const row = page.locator('tr.refund');
    await row.waitFor();
    expect((await row.locator('td').allTextContents()).slice(0, 4)).toEqual(['NGN 250.50', 'Succeeded', 'Damaged in transit', '—']);
    expect(await total(page, 'amount-refunded').textContent()).toBe('NGN 250.50');
    expect(await total(page, 'amount-refundable').textContent()).toBe('NGN 749.50');
    expect(await orderOf(partlyRefunded)).toEqual({
      amountRefunded: '250.50',
      amountRefundable: '749.50',
      refunds: [{ amount: '250.50', status: 'SUCCEEDED', reason: 'Damaged in transit' }],
    });
  }, 60_000);

  it("refuses more than the balance next to the amount, in the service's words, and refunds nothing", async () => {
    await openOrder(page, partlyRefunded);
    await refundButton(page).click();
    expect(await page.getByLabel('Amount to refund (NGN)').inputValue()).toBe('749.50');
    await page.getByLabel('Amount to refund (NGN)').fill('800');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Confirm refund' }).click();
    const refusal = page.locator('#refund-amount-error');
    await refusal.waitFor();
    expect(await refusal.textContent()).toBe('The amount must be at most the balance of the order, NGN 749.50.');
    expect(await page.getByLabel('Amount to refund (NGN)').getAttribute('aria-invalid')).toBe('true');
    // An amount that is not a number is caught before the confirmation.
    await page.getByLabel('Amount to refund (NGN)').fill('12,5');
    await page.getByRole('button', { name: 'Continue' }).click();
    expect(await refusal.textContent()).toBe('Enter an amount in figures, such as 1500 or 1500.50.');
    expect(await page.getByRole('alertdialog').count()).toBe(0);
    expect((await orderOf(partlyRefunded)).refunds).toHaveLength(1);
  }, 60_000);

  it('a double click on "Confirm refund", or sending again after the answer was lost, refunds once', async () => {
    const reference = await paid();
    await openOrder(page, reference);
    await refundButton(page).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Confirm refund' }).dblclick();
    await page.getByRole('status').getByText('Refunded NGN 1,000.00 to the customer.').waitFor();
    expect((await orderOf(reference)).refunds).toEqual([{ amount: '1000.00', status: 'SUCCEEDED', reason: null }]);
    // The status line can come before the order's refund table is drawn again: wait for its row, then count.
    await page.locator('tr.refund').first().waitFor();
    expect(await page.locator('tr.refund').count()).toBe(1);
    // Nothing is left: no "Refund" any more.
    expect(await total(page, 'amount-refundable').textContent()).toBe('NGN 0.00');
    expect(await refundButton(page).count()).toBe(0);

    // The service refunds, but its answer never reaches the page; the merchant sends the same form again.
    const other = await paid();
    await openOrder(page, other);
    await refundButton(page).click();
    await page.getByLabel('Amount to refund (NGN)').fill('300');
    await page.getByRole('button', { name: 'Continue' }).click();
    let lost = 0;
    await page.route('**/graphql', async (route) => {
      if (lost === 0 && route.request().postData()?.includes('refundOrder')) {
        lost += 1;
        await route.fetch(); // the service does the refund
        await route.abort('connectionreset');
        return;
      }
      await route.continue();
    });
    await page.getByRole('button', { name: 'Confirm refund' }).click();
    await page.getByRole('form', { name: 'Refund' }).getByRole('alert').waitFor();
    expect((await orderOf(other)).refunds).toHaveLength(1);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Confirm refund' }).click();
    await page.getByRole('status').getByText('Refunded NGN 300.00 to the customer.').waitFor();
    await page.unroute('**/graphql');
    expect(lost).toBe(1);
    expect(await orderOf(other)).toMatchObject({ amountRefunded: '300.00', refunds: [{ amount: '300.00', status: 'SUCCEEDED' }] });
  }, 60_000);

  it('a VIEWER sees the refunds and the balance but no "Refund"', async () => {
    const viewer = await addMember(t.baseUrl, m.keys.test.privateKey, `viewer-${m.subsidiary.id}@merchant.test`, 'VIEWER');
    const viewerPage = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
    await signInAsMember(viewerPage, t.baseUrl, viewer);
    await viewerPage.getByRole('heading', { name: 'Latest orders' }).waitFor();
    await openOrder(viewerPage, partlyRefunded);
    await viewerPage.locator('tr.refund').waitFor();
    expect(await total(viewerPage, 'amount-refundable').textContent()).toBe('NGN 749.50');
    expect(await refundButton(viewerPage).count()).toBe(0);
    // The owner, on the same order, has it.
    await openOrder(page, partlyRefunded);
    await refundButton(page).waitFor();
  }, 60_000);

  it("shows the period's refunded volume on the overview, beside the volume", async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview', exact: true }).click();
    const today = page.getByRole('region', { name: 'Today' });
    await today.locator('.refunded').waitFor();
    expect((await today.locator('.refunded').textContent())!.trim()).toBe('Refunded: NGN 1,550.50 (3 refunds)');
  }, 60_000);
});
