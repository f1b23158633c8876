import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signedInDashboard } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { graphql } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';
import { payOrder, waitFor } from '../integration/events/helpers';

const DISPUTES = `query { disputes { edges { node { orderReference status evidence } } } }`;

/** The "Disputes" page in Chromium: a dispute of a payment with the disputed sandbox card, answered with evidence. */
describe('dashboard disputes in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;
  let m: CreatedMerchant;

  beforeAll(async () => {
    t = await startTestService({ DISPUTE_POLL_INTERVAL_MS: '200' });
    m = await createTestMerchant(t, { name: 'Ibadan Looms' });
    browser = await launchBrowser();
    page = await signedInDashboard(browser, t.baseUrl, m);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const disputes = async () => (await graphql(t.baseUrl, DISPUTES, {}, { 'api-key': m.keys.test.privateKey })).body.data.disputes.edges.map((e: any) => e.node);

  it('lists a dispute that needs a response with its amount, reason and deadline, and answers it with evidence', async () => {
    const reference = await payOrder(t.baseUrl, m.keys.test, '4000000000000259', `DP-E2E-${Date.now()}`);
    await waitFor(async () => (await disputes()).length === 1, 10_000, 'the dispute to open');

    // The order's page shows the open dispute, offers no refund while it is open, and leads to its answer.
    await page.goto(`${t.baseUrl}/dashboard/orders/${encodeURIComponent(reference)}`);
    const onOrder = page.locator('section', { has: page.getByRole('heading', { name: 'Disputes', exact: true }) }).locator('tr.dispute');
    await onOrder.waitFor();
    expect(await onOrder.locator('td').allTextContents()).toEqual(['NGN 1,000.00', 'Fraudulent', 'Needs response', expect.any(String), expect.any(String)]);
    expect(await page.getByRole('button', { name: 'Refund', exact: true }).count()).toBe(0);
    await page.getByRole('link', { name: 'Answer it on the Disputes page' }).click();
    await page.waitForURL(/\/dashboard\/disputes\?status=NEEDS_RESPONSE$/);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Disputes', exact: true }).click();
    await page.getByRole('heading', { name: 'Disputes' }).waitFor();
    const row = page.locator('tr.dispute', { hasText: reference });
    await row.waitFor();
    expect(await row.locator('td').nth(2).textContent()).toBe('NGN 1,000.00');
    expect(await row.locator('td').nth(3).textContent()).toBe('Fraudulent');
    expect(await row.locator('td').nth(4).textContent()).toBe('Needs response');

    // Filtering by another status hides it; by its own shows it.
    await page.getByLabel('Status').selectOption('WON');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/\/dashboard\/disputes\?status=WON$/);
    await page.getByText('No disputes.').waitFor();
    await page.getByLabel('Status').selectOption('NEEDS_RESPONSE');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await row.waitFor();

    await row.getByLabel('Evidence').fill('Signed proof of delivery: winning_evidence');
    await row.getByRole('button', { name: 'Submit evidence' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Evidence submitted for ${reference}` })
      .waitFor();
    // The list is reloaded with the filter kept: the answered dispute no longer needs a response.
    await page.getByText('No disputes.').waitFor();
    expect((await disputes())[0]).toMatchObject({ orderReference: reference, evidence: 'Signed proof of delivery: winning_evidence' });
    await waitFor(async () => (await disputes())[0].status === 'WON', 10_000, 'the dispute to be won');

    await page.getByLabel('Status').selectOption('');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/\/dashboard\/disputes$/);
    expect(await row.locator('td').nth(4).textContent()).toBe('Won');
    expect(await row.getByRole('button', { name: 'Submit evidence' }).count()).toBe(0);
  });
});
