import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signedInDashboard } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { graphql } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const CREATE_LINK = `mutation ($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { id reference } }`;

/** The "Audit log" page in Chromium: the entries of the merchant's changes, filters, and the CSV of what is shown. */
describe('dashboard audit log in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  let page: Page;
  let m: CreatedMerchant;

  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Kano Tanners' });
    browser = await launchBrowser();
    page = await signedInDashboard(browser, t.baseUrl, m);
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('lists a link created through the API, newest first, and filters the log and its CSV by action', async () => {
    const created = await graphql(
      t.baseUrl,
      CREATE_LINK,
      { input: { name: 'Leather bag', description: 'Hand-tooled', paymentType: 'MC', amount: '25000' } },
      { 'api-key': m.keys.test.privateKey },
    );
    const link = created.body.data.createPaymentLink;
    const target = `link ${link.id} ${link.reference}`;

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log', exact: true }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const rows = page.locator('tr.audit-entry');
    await rows.filter({ hasText: target }).waitFor();
    // Newest first: the link, this browser's sign-in, the owner's joining and invitation, the merchant's creation.
    expect(await rows.locator('td:nth-child(2)').allTextContents()).toEqual([
      'link.created',
      'session.signed_in',
      'member.joined',
      'member.invited',
      'merchant.created',
    ]);

    await page.getByLabel('Action').selectOption('session.signed_in');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/\/dashboard\/audit\?action=session.signed_in$/);
    // The filtered list has replaced the whole one.
    await page.waitForFunction(() => document.querySelectorAll('tr.audit-entry').length === 1);
    expect(await rows.locator('td:nth-child(2)').allTextContents()).toEqual(['session.signed_in']);

    // The download is the same filter, for this session's environment.
    const href = await page.getByRole('link', { name: 'Download CSV' }).getAttribute('href');
    expect(href).toBe('/dashboard/api/audit.csv?environment=test&action=session.signed_in');
    const csv = await page.request.get(`${t.baseUrl}${href}`);
    expect(csv.status()).toBe(200);
    const lines = (await csv.text()).split('\r\n');
    expect(lines[0]).toBe('at,action,actorType,actorLabel,target,ip,environment');
    expect(lines.slice(1, -1).map((l) => l.split(',')[1])).toEqual(['session.signed_in']);
  });
});
