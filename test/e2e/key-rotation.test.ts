import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchBrowser, signInAsOwner } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { request } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const RESULTS = path.join(__dirname, '..', '..', 'test-results');
const DAY_MS = 24 * 60 * 60 * 1000;

/** Key rotation on the dashboard's Developers page, in Chromium: confirmed, with a grace period chosen, new keys shown once. */
describe('dashboard key rotation in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let m: CreatedMerchant;

  const works = async (key: string) =>
    (await request(t.baseUrl, 'POST', '/graphql', { apiKey: key, body: { query: '{ merchant { environment } }' } })).body.data?.merchant?.environment ===
    'TEST';

  beforeAll(async () => {
    fs.mkdirSync(RESULTS, { recursive: true });
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Abuja Crafts' });
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.baseUrl });
    page = await context.newPage();
    await signInAsOwner(page, t.baseUrl, m);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Developers', exact: true }).click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('lists private and public keys in separate groups', async () => {
    const hints = (group: string) => page.locator(`section[data-key-group="${group}"] td.mono`).allTextContents();
    const privateHints = await hints('private');
    const publicHints = await hints('public');
    const hint = (key: string) => `${key.slice(0, 19)}…${key.slice(-4)}`;
    expect(privateHints).toEqual([hint(m.keys.test.privateKey)]);
    expect(publicHints).toEqual([hint(m.keys.test.publicKey)]);
  }, 30_000);

  it('asks for confirmation: cancelling rotates nothing', async () => {
    await page.getByLabel('Private key', { exact: true }).check();
    await page.getByRole('button', { name: 'Rotate selected keys…' }).click();
    const dialog = page.getByRole('alertdialog');
    expect((await dialog.getByRole('heading').textContent())?.trim()).toBe('Rotate the private key?');
    expect(await dialog.textContent()).toContain('The old keys keep working for 24 hours');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect(await page.getByRole('alertdialog').count()).toBe(0);
    expect(await works(m.keys.test.privateKey)).toBe(true);
    const keys = await request(t.baseUrl, 'POST', '/graphql', { apiKey: m.keys.test.privateKey, body: { query: '{ apiKeys { kind expiresAt } }' } });
    expect(keys.body.data.apiKeys.every((k: { expiresAt: string | null }) => k.expiresAt === null)).toBe(true);
  }, 30_000);

  let routineKey: string;
  it('routine rotation keeps the old keys for 24 hours and shows the new ones once, apart, with copy buttons and a warning', async () => {
    await page.getByLabel('Private key', { exact: true }).check();
    await page.getByLabel('Public key', { exact: true }).check();
    await page.getByRole('button', { name: 'Rotate selected keys…' }).click();
    const before = Date.now();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Yes, rotate' }).click();
    const shown = page.locator('.saved [data-key-group="private"] code[data-key-kind="Private key"]');
    await shown.waitFor();
    routineKey = (await shown.textContent())!.trim();
    expect(routineKey).toMatch(/^PGW-SECRETKEY-TEST-[0-9a-f]{32}$/);
    const publicKey = (await page.locator('.saved [data-key-group="public"] code[data-key-kind="Public key"]').textContent())!.trim();
    expect(publicKey).toMatch(/^PGW-PUBLICKEY-TEST-/);
    expect(await page.locator('.saved [data-key-group="public"] code[data-key-kind="Private key"]').count()).toBe(0);
    expect(await page.locator('.saved .warning').textContent()).toContain('shown only this once');

    await page.locator('.saved').getByRole('button', { name: 'Copy private key' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(routineKey);
    await page.screenshot({ path: path.join(RESULTS, 'dashboard-new-keys.png'), fullPage: true });

    // The old private key still works, until 24 hours from the rotation.
    expect(await works(m.keys.test.privateKey)).toBe(true);
    expect(await works(routineKey)).toBe(true);
    const keys = await request(t.baseUrl, 'POST', '/graphql', { apiKey: routineKey, body: { query: '{ apiKeys { kind expiresAt } }' } });
    const ending = keys.body.data.apiKeys.filter((k: { expiresAt: string | null }) => k.expiresAt).map((k: { expiresAt: string }) => Date.parse(k.expiresAt));
    expect(ending).toHaveLength(2);
    for (const at of ending) {
      expect(at).toBeGreaterThanOrEqual(before + DAY_MS - 1000);
      expect(at).toBeLessThanOrEqual(Date.now() + DAY_MS);
    }

    // Once saved, the keys are gone from the page.
    await page.getByRole('button', { name: 'I have saved these keys' }).click();
    expect(await page.locator('code[data-key-kind]').count()).toBe(0);
    expect(await page.content()).not.toContain(routineKey);
  }, 60_000);

  it('a leaked key stops working now', async () => {
    await page.getByLabel('Private key', { exact: true }).check();
    await page.getByLabel('Now (a key was leaked)').check();
    await page.getByRole('button', { name: 'Rotate selected keys…' }).click();
    const dialog = page.getByRole('alertdialog');
    expect(await dialog.textContent()).toContain('The old keys stop working immediately');
    await dialog.getByRole('button', { name: 'Yes, rotate' }).click();
    const shown = page.locator('.saved code[data-key-kind="Private key"]');
    await shown.waitFor();
    const newest = (await shown.textContent())!.trim();
    expect(newest).not.toBe(routineKey);
    expect(await works(routineKey)).toBe(false);
    expect(await works(newest)).toBe(true);
  }, 60_000);
});
