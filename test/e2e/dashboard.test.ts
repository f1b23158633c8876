import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { launchBrowser } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { request } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import { ownerOf, type TestMember } from '../support/members';
import { createScratchDatabase } from '../support/scratch-database';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const RESULTS = path.join(__dirname, '..', '..', 'test-results');
/** DASHBOARD_SCREENSHOTS=1 writes the documentation's screenshots (docs/screenshots) instead of test-results. */
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS === '1' ? path.join(__dirname, '..', '..', 'docs', 'screenshots') : RESULTS;

/**
 * The merchant dashboard in real Chromium: sign-in, links, a payment made in another tab
 * turning the order Successful on screen without a reload, filters, key rotation, webhooks.
 * The steps share one merchant and run in order, on a database of this file's own: its live
 * dispatcher delivers exactly this file's webhooks, and no other file's delivers them.
 */
describe('merchant dashboard in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let m: CreatedMerchant;
  let owner: TestMember;
  let receiver: http.Server;
  let received: string[];
  const consoleErrors: string[] = [];
  let paidReference: string;
  let dropDatabase: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    fs.mkdirSync(RESULTS, { recursive: true });
    const scratch = await createScratchDatabase('dashboard');
    dropDatabase = scratch.drop;
    t = await startTestService({
      DATABASE_URL: scratch.url,
      WEBHOOK_CONCURRENCY: '2',
      WEBHOOK_POLL_INTERVAL_MS: '200',
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    });
    received = [];
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(body);
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    m = await createTestMerchant(t, { name: 'Lagos Coffee Roasters', webhookUrl: `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks` });
    owner = await ownerOf(t.baseUrl, m);
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('console', (msg) => msg.type() === 'error' && consoleErrors.push(msg.text()));
    page.on('pageerror', (err) => consoleErrors.push(String(err)));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => receiver?.close(resolve));
    await t?.close();
    await dropDatabase();
  });

  it('serves the page with a strict CSP', async () => {
    const res = await page.goto(`${t.baseUrl}/dashboard`);
    expect(res!.status()).toBe(200);
    const csp = res!.headers()['content-security-policy']!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${new URL(t.baseUrl).port}`);
    expect(csp).not.toContain('unsafe-inline');
  }, 30_000);

  it('shows an error for a wrong password and signs nothing in; no field takes a key', async () => {
    expect(await page.getByLabel('Private key').count()).toBe(0);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill('not the right password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await containsSoon(page.getByRole('alert'), 'do not match');
    expect(await context.cookies()).toEqual([]);
  }, 30_000);

  it('signs the owner in with email and password into an httpOnly session, nothing secret kept in the browser', async () => {
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await nav(page, 'Orders').waitFor();
    await nav(page, 'Payment links').waitFor();
    await nav(page, 'Team').waitFor();
    await nav(page, 'Audit log').waitFor();
    await page.getByText('Test data').waitFor();
    const cookies = await context.cookies();
    expect(cookies).toHaveLength(1);
    expect(cookies[0]).toMatchObject({ name: 'pgw_dashboard', httpOnly: true, sameSite: 'Strict' });
    const storage = await page.evaluate(() => JSON.stringify({ l: { ...localStorage }, s: { ...sessionStorage }, c: document.cookie }));
    expect(storage).not.toContain(owner.password);
    expect(storage).not.toContain(cookies[0]!.value);
    // One sign-in covers both environments: live opens without asking anything.
    await page.getByRole('button', { name: 'Live' }).click();
    await page.getByText('Live data').waitFor();
    await page.getByRole('button', { name: 'Test' }).click();
    await page.getByText('Test data').waitFor();
  }, 30_000);

  it('creates a link of each type, the rules shown as the form is filled', async () => {
    for (const [type, label, name, rule] of [
      ['SC', 'Single charge', 'Bag of beans', 'accepts one successful payment'],
      ['MC', 'Multiple charge', 'Coffee tasting', 'up to 5 paying customers'],
      ['SUB', 'Subscription', 'Monthly beans', 'charged again on the schedule'],
    ] as const) {
      await nav(page, 'Payment links').click();
      await page.getByRole('link', { name: 'New payment link' }).click();
      await page.getByLabel(label).check();
      await page.getByLabel('Name').fill(name);
      await page.getByLabel('Description').fill(`${name}, freshly roasted`);
      await page.getByLabel(/^Amount/).fill('12500');
      if (type !== 'SC') await page.getByLabel(/^Limit/).fill('5');
      await containsSoon(page.locator('.rules'), rule);
      await containsSoon(page.locator('.rules'), 'Every payment is NGN 12,500.00.');
      await page.getByRole('button', { name: 'Create link' }).click();
      await page.getByText('Link created').waitFor();
      await page.locator('.saved canvas.qr').waitFor();
    }
    await nav(page, 'Payment links').click();
    await containsSoon(page.locator('ul.links'), 'Monthly beans');
    expect(await page.locator('li.link-card').count()).toBe(3);
    const links = await request(t.baseUrl, 'POST', '/graphql', {
      apiKey: m.keys.test.privateKey,
      body: { query: '{ paymentLinks { edges { node { name paymentLinkCode amount limit isActive } } } }' },
    });
    expect(links.body.data.paymentLinks.edges.map((e: { node: unknown }) => e.node)).toEqual([
      { name: 'Monthly beans', paymentLinkCode: 'SUB', amount: '12500.00', limit: 5, isActive: true },
      { name: 'Coffee tasting', paymentLinkCode: 'MC', amount: '12500.00', limit: 5, isActive: true },
      { name: 'Bag of beans', paymentLinkCode: 'SC', amount: '12500.00', limit: null, isActive: true },
    ]);
  }, 60_000);

  it('shows a payment made in another tab turning the order Successful, live', async () => {
    const url = (await page
      .locator('li.link-card', { hasText: 'Bag of beans' })
      .getByRole('link', { name: /\/pay\// })
      .getAttribute('href'))!;
    const payer = await context.newPage();
    await payer.goto(url);
    await payer.fill('#firstname', 'Ada');
    await payer.fill('#lastname', 'Obi');
    await payer.fill('#email', 'ada@example.test');
    await payer.fill('#mobile', '+2348012345678');
    await payer.fill('#cardNumber', '5123 4500 0000 0008');
    await payer.fill('#expiry', '12 / 30');
    await payer.fill('#cvv', '123');
    await payer.fill('#street', '1 Marina');
    await payer.fill('#city', 'Lagos');
    const payerErrors: string[] = [];
    payer.on('console', (msg) => msg.type() === 'error' && payerErrors.push(msg.text()));
    await payer.click('button[type="submit"]');
    await payer.waitForURL(/\/sandbox\/3ds\//, { timeout: 15_000 }).catch(async (err) => {
      await payer.screenshot({ path: path.join(RESULTS, 'dashboard-payer.png'), fullPage: true });
      throw new Error(`${err}; payer console: ${payerErrors.join(' | ')}`);
    });

    // The order exists, pending authentication: open it on the dashboard.
    await nav(page, 'Orders').click();
    const row = page.locator('tbody tr', { hasText: 'LNK-' }).first();
    await containsSoon(row, 'Pending authentication');
    paidReference = (await row.getAttribute('data-reference'))!;
    await row.getByRole('link', { name: paidReference }).click();
    await containsSoon(page.locator('.order-status'), 'Pending authentication');
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    await payer.fill('#otp', '123456');
    await payer.click('button[type="submit"]');
    await containsSoon(page.locator('.order-status'), 'Successful', 10_000);
    expect(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
    // The webhook of the Successful event shows in the order's delivery log with the receiver's answer.
    await containsSoon(page.locator('.deliveries'), 'HTTP 200', 15_000);
    await payer.close();
  }, 60_000);

  it('redelivers a webhook and shows the new attempt in the log', async () => {
    const deliveries = page.locator('li.delivery');
    expect(await deliveries.count()).toBe(1);
    // The Successful event's webhook, delivered once.
    expect(received).toHaveLength(1);
    await page
      .getByRole('button', { name: /^Redeliver event/ })
      .first()
      .click();
    await waitFor(async () => (await deliveries.count()) === 2 && (await page.locator('tr.attempt', { hasText: 'HTTP 200' }).count()) === 2, 15_000);
    expect(received).toHaveLength(2);
    expect(received[1]).toBe(received[0]); // the same event, the same body
    const eventIds = await deliveries.evaluateAll((els) => els.map((e) => e.getAttribute('data-event-id')));
    expect(eventIds[0]).toBe(eventIds[1]); // a redelivery carries the same eventId
    await page.screenshot({ path: path.join(SCREENSHOTS, 'order.png'), fullPage: true });
  }, 30_000);

  it('filters orders by status and customer email', async () => {
    for (const [reference, email] of [
      ['DASH-A-1', 'bola@example.test'],
      ['DASH-B-2', 'chidi@example.test'],
    ]) {
      const created = await request(t.baseUrl, 'POST', '/graphql', {
        apiKey: m.keys.test.privateKey,
        body: {
          query: 'mutation($input: CreateOrderInput!) { createOrder(input: $input) { orderReference } }',
          variables: {
            input: {
              reference,
              amount: '500',
              currency: 'NGN',
              redirectUrl: 'https://merchant.example/done',
              customer: { firstname: 'A', lastname: 'B', mobile: '+2348011111111', country: 'NG', email },
            },
          },
        },
      });
      expect(created.body.data.createOrder.orderReference).toBe(reference);
    }
    await nav(page, 'Orders').click();
    await containsSoon(page.locator('tbody'), 'DASH-B-2');
    expect(await page.locator('tbody tr').count()).toBe(3);

    await page.getByLabel('Status').selectOption({ label: 'Successful' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await waitFor(async () => (await page.locator('tbody tr').count()) === 1);
    await containsSoon(page.locator('tbody'), paidReference);

    await page.getByLabel('Status').selectOption({ label: 'Any status' });
    await page.getByLabel('Customer email').fill('chidi@example.test');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await waitFor(async () => (await page.locator('tbody tr').count()) === 1);
    await containsSoon(page.locator('tbody'), 'DASH-B-2');
    await containsSoon(page.locator('tbody'), 'Initiated');

    const today = new Date();
    const iso = `${today.getFullYear()}-${String(today.getMonth() + 1).padStart(2, '0')}-${String(today.getDate()).padStart(2, '0')}`;
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.getByLabel('Created from').fill(iso);
    await page.getByLabel('Created to').fill(iso);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await waitFor(async () => (await page.locator('tbody tr').count()) === 3);

    // Only the paid order has a payment method (card); the two created over GraphQL have none yet.
    await page.getByLabel('Payment method').selectOption({ label: 'Card' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await waitFor(async () => (await page.locator('tbody tr').count()) === 1);
    await containsSoon(page.locator('tbody'), paidReference);
    await page.getByLabel('Payment method').selectOption({ label: 'PayPal' });
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await containsSoon(page.locator('main'), 'No orders.');
  }, 30_000);

  it('draws the overview', async () => {
    await nav(page, 'Overview').click();
    await page.getByRole('heading', { name: 'Latest orders' }).waitFor();
    await containsSoon(page.locator('section[aria-labelledby="latest-heading"] tbody'), 'DASH-B-2');
    // The per-method figures: the card payment of the paid order, counted as successful.
    await containsSoon(page.locator('main'), 'Card Payment');
    // Screenshot once nothing moves: fonts loaded and no animation running.
    await page.evaluate(() => document.fonts.ready.then(() => undefined));
    await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== 'running'));
    await page.screenshot({ path: path.join(SCREENSHOTS, 'overview.png'), fullPage: true });
  }, 30_000);

  it('rotates the private key: the new key is shown once, the old one is refused', async () => {
    await nav(page, 'Developers').click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Private key', { exact: true }).check();
    await page.getByLabel('Now (a key was leaked)').check();
    await page.getByRole('button', { name: 'Rotate selected keys…' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Yes, rotate' }).click();
    const shown = page.locator('code[data-key-kind="Private key"]');
    await shown.waitFor();
    const newKey = (await shown.textContent())!.trim();
    expect(newKey).toMatch(/^PGW-SECRETKEY-TEST-[0-9a-f]{32}$/);

    const old = await request(t.baseUrl, 'POST', '/graphql', { apiKey: m.keys.test.privateKey, body: { query: '{ merchant { environment } }' } });
    expect(old.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    const fresh = await request(t.baseUrl, 'POST', '/graphql', { apiKey: newKey, body: { query: '{ merchant { environment } }' } });
    expect(fresh.body.data.merchant.environment).toBe('TEST');

    // The owner's session does not hang on any key: the dashboard goes on.
    await nav(page, 'Orders').click();
    await containsSoon(page.locator('tbody'), 'DASH-B-2');
  }, 60_000);

  it("sends a test ping from the Developers page and rotates the environment's own signing secret", async () => {
    await nav(page, 'Developers').click();
    await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
    expect(await page.getByLabel('Webhook URL').inputValue()).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/hooks$/);
    await page.getByRole('button', { name: 'Send test ping' }).click();
    await containsSoon(page.locator('li.delivery').first(), 'test_assess');
    await containsSoon(page.locator('li.delivery').first(), 'HTTP 200', 15_000);
    expect(received.filter((body) => body.includes('"test_assess"'))).toHaveLength(1);

    // Each environment has its own secret: the test one is rotated here, the live one is not touched.
    const signing = page.getByRole('form', { name: 'Signing secret' });
    await containsSoon(signing, "this rotates the Test environment's");
    await signing.getByRole('button', { name: 'Rotate signing secret' }).click();
    const shown = (await signing.locator('code.secret').textContent({ timeout: 10_000 }))!.trim();
    expect(shown).toMatch(/^whsec_/);
    expect(shown).not.toBe(m.webhookSecret);
    expect(await t.service.runtime.ctx.services.signingSecrets.current(m.subsidiary.id, 'test')).toBe(shown);
    expect(await t.service.runtime.ctx.services.signingSecrets.current(m.subsidiary.id, 'live')).toBe(m.liveWebhookSecret);
    const encryptionKey = await page.locator('textarea.key-text').inputValue();
    expect(encryptionKey).toBe(m.keys.test.encryptionKey);
  }, 30_000);

  it('fits a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await nav(page, 'Orders').click();
    await containsSoon(page.locator('tbody'), 'DASH-B-2');
    // Nothing wider than the screen: no sideways scrolling of the page.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: path.join(RESULTS, 'dashboard-phone-orders.png'), fullPage: true });
    await nav(page, 'Overview').click();
    await page.getByRole('heading', { name: 'Latest orders' }).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  }, 30_000);

  it('has had no script errors or CSP violations', () => {
    // The browser logs every 4xx answer (401 before sign-in, a wrong password) as "Failed to load resource".
    expect(consoleErrors.filter((e) => !e.startsWith('Failed to load resource'))).toEqual([]);
  });
});

/** A link of the main navigation. */
function nav(page: Page, name: string) {
  return page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
}

/** Polls until the condition holds. */
async function waitFor(condition: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Polls the locator's text until it contains `text`. */
async function containsSoon(locator: Locator, text: string, ms = 10_000): Promise<void> {
  let last = '';
  try {
    await waitFor(async () => {
      last = (await locator.textContent({ timeout: ms }).catch(() => '')) ?? '';
      return last.includes(text);
    }, ms);
  } catch {
    throw new Error(`expected "${text}" in: ${last.slice(0, 500)}`);
  }
}
