import { chromium, type Browser, type Page } from 'playwright-core';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';
import { ownerOf } from './members';

/**
 * The Chromium the browser tests drive, chosen by test/support/global-setup.ts (see
 * test/support/chromium.ts and docs/testing.md): `CHROMIUM_PATH`, else an installed one, else
 * the one unpacked from the `@sparticuz/chromium` npm package.
 */
function chromiumPath(): string {
  const executable = process.env.CHROMIUM_PATH;
  if (!executable) throw new Error('CHROMIUM_PATH is unset: test/support/global-setup.ts sets it for the test run');
  return executable;
}

/** Libraries and fonts for the packaged Chromium (unset for an installed one). */
function chromiumEnv(): Record<string, string> | undefined {
  const libs = process.env.CHROMIUM_LIBRARY_PATH;
  const fonts = process.env.CHROMIUM_FONTCONFIG_PATH;
  if (!libs && !fonts) return undefined;
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  if (libs) env.LD_LIBRARY_PATH = [libs, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':');
  if (fonts) env.FONTCONFIG_PATH = fonts;
  return env;
}

/** A headless Chromium that talks to nothing but the pages it is sent to. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    env: chromiumEnv(),
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** Signs the page in to the dashboard as a member, with their email and password. */
export async function signInAsMember(page: Page, baseUrl: string, member: { email: string; password: string }): Promise<void> {
  await page.goto(`${baseUrl}/dashboard`);
  await page.getByLabel('Email').fill(member.email);
  await page.getByLabel('Password').fill(member.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Signs the page in to the dashboard as the merchant's owner (made on first use through the private key's invitation). */
export async function signInAsOwner(page: Page, baseUrl: string, merchant: CreatedMerchant): Promise<void> {
  await signInAsMember(page, baseUrl, await ownerOf(baseUrl, merchant));
}

/** A fresh 1280×1000 page of `browser`, signed in to the dashboard as the merchant's owner and showing the overview. */
export async function signedInDashboard(browser: Browser, baseUrl: string, merchant: CreatedMerchant): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  await signInAsOwner(page, baseUrl, merchant);
  await page.getByRole('heading', { name: 'Latest orders' }).waitFor();
  return page;
}
