import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signInAsMember, signInAsOwner } from '../support/browser';
import { startTestService, type TestService } from '../support/service';
import { request } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import { addMember, MEMBER_PASSWORD } from '../support/members';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const INVITEE = 'amaka@weavers.example';

/**
 * The Team page in Chromium: an owner invites a SUPPORT member, who joins and signs in in a browser
 * of their own; the owner makes them a VIEWER and their open dashboard goes back to sign-in at once,
 * then shows only what a viewer may use; the owner removes them after a confirmation.
 */
describe('dashboard team access in Chromium', () => {
  let t: TestService;
  let browser: Browser;
  let owner: Page;
  let invitee: Page;
  let m: CreatedMerchant;

  const nav = (page: Page) => page.getByRole('navigation', { name: 'Main' });
  const navLink = (page: Page, name: string) => nav(page).getByRole('link', { name, exact: true });
  const newPage = async () => (await browser.newContext({ viewport: { width: 1280, height: 1000 } })).newPage();
  const memberRow = (email: string) => owner.locator(`tr.member[data-member-email="${email}"]`);

  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Onitsha Weavers' });
    browser = await launchBrowser();
    owner = await newPage();
    await signInAsOwner(owner, t.baseUrl, m);
    await owner.getByRole('heading', { name: 'Latest orders' }).waitFor();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('shows the owner every page, and invites a SUPPORT member on the Team page: the invitation URL is shown to copy', async () => {
    expect(await nav(owner).getByRole('link').allTextContents()).toEqual([
      'Overview',
      'Orders',
      'Payment links',
      'Disputes',
      'Developers',
      'Team',
      'Audit log',
      'Security',
    ]);
    await navLink(owner, 'Team').click();
    await owner.getByRole('heading', { name: 'Team', exact: true }).waitFor();
    await memberRow(`owner-${m.subsidiary.id}@merchant.test`).waitFor();

    await owner.getByLabel('Email', { exact: true }).fill(INVITEE);
    await owner.getByLabel('Role', { exact: true }).selectOption('SUPPORT');
    await owner.getByRole('button', { name: 'Invite', exact: true }).click();
    const url = (await owner.locator('code.invitation-url').textContent())!.trim();
    expect(url).toMatch(new RegExp(`^${t.baseUrl}/dashboard/invitations/[A-Za-z0-9_-]{43}$`));
    await owner.getByRole('button', { name: 'Copy invitation URL' }).waitFor();

    // The invited person accepts the invitation with a password of their choice.
    const accepted = await request(t.baseUrl, 'POST', '/graphql', {
      body: {
        query: `mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { email role } }`,
        variables: { input: { token: url.split('/').pop(), password: MEMBER_PASSWORD } },
      },
    });
    expect(accepted.body.data.acceptInvitation).toEqual({ email: INVITEE, role: 'SUPPORT' });
  }, 60_000);

  it('signs the SUPPORT member in in a second browser: links they may create, no developers, audit or team management', async () => {
    invitee = await newPage();
    await signInAsMember(invitee, t.baseUrl, { email: INVITEE, password: MEMBER_PASSWORD });
    await invitee.getByText(`${INVITEE} (support)`).waitFor();
    expect(await nav(invitee).getByRole('link').allTextContents()).toEqual(['Overview', 'Orders', 'Payment links', 'Disputes', 'Team', 'Security']);

    await navLink(invitee, 'Team').click();
    await invitee.getByText('Signed in as').waitFor();
    expect(await invitee.locator('ul.may li').evaluateAll((items) => items.map((li) => li.getAttribute('data-action')))).toEqual([
      'read',
      'links.write',
      'payments.write',
    ]);
    expect(await invitee.getByRole('button', { name: 'Invite' }).count()).toBe(0);

    await navLink(invitee, 'Payment links').click();
    await invitee.getByRole('link', { name: 'New payment link' }).click();
    await invitee.getByRole('button', { name: 'Create link' }).waitFor();
  }, 60_000);

  it("makes the member a VIEWER: their open dashboard goes back to sign-in at once, then shows no 'Create link'", async () => {
    await owner.reload();
    await memberRow(INVITEE).waitFor();
    const form = owner.getByRole('form', { name: `Role of ${INVITEE}` });
    await form.getByLabel(`New role of ${INVITEE}`).selectOption('VIEWER');
    await form.getByRole('button', { name: 'Change role' }).click();
    await memberRow(INVITEE).locator('td[data-role="VIEWER"]').waitFor();

    // Nothing is clicked on the member's page: the service closed their socket and the page signed out.
    await invitee.getByLabel('Password').waitFor({ timeout: 10_000 });
    expect(await invitee.getByRole('button', { name: 'Create link' }).count()).toBe(0);

    await invitee.getByLabel('Email').fill(INVITEE);
    await invitee.getByLabel('Password').fill(MEMBER_PASSWORD);
    await invitee.getByRole('button', { name: 'Sign in' }).click();
    await invitee.getByText(`${INVITEE} (viewer)`).waitFor();
    expect(await nav(invitee).getByRole('link').allTextContents()).toEqual(['Overview', 'Orders', 'Payment links', 'Disputes', 'Team', 'Security']);
    await navLink(invitee, 'Payment links').click();
    await invitee.getByRole('heading', { name: 'Payment links' }).waitFor();
    expect(await invitee.getByRole('link', { name: 'New payment link' }).count()).toBe(0);
    // Even at the editor's address, a viewer gets no form.
    await invitee.goto(`${t.baseUrl}/dashboard/links/new`);
    await invitee.getByText('does not allow creating or editing payment links').waitFor();
    expect(await invitee.getByRole('button', { name: 'Create link' }).count()).toBe(0);
  }, 60_000);

  it('shows a VIEWER no team management; the service refuses them anyway', async () => {
    await navLink(invitee, 'Team').click();
    await invitee.getByText('Signed in as').waitFor();
    for (const name of ['Invite', 'Change role', 'Remove']) expect(await invitee.getByRole('button', { name }).count()).toBe(0);
    expect(await invitee.locator('ul.may li').evaluateAll((items) => items.map((li) => li.getAttribute('data-action')))).toEqual(['read']);
    // The page's own session, asking the API directly, is refused.
    const refused = await invitee.evaluate(async () => {
      const session = await (await fetch('/dashboard/session')).json();
      const res = await fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': session.csrfToken, 'x-environment': 'test' },
        body: JSON.stringify({ query: 'mutation { inviteMember(input: { email: "friend@weavers.example", role: ADMIN }) { invitationUrl } }' }),
      });
      return (await res.json()).errors[0].extensions.code;
    });
    expect(refused).toBe('FORBIDDEN');
  }, 30_000);

  it('shows a DEVELOPER the developers page without the private key or the signing secret, and no team management', async () => {
    const developer = await addMember(t.baseUrl, m.keys.test.privateKey, 'dev@weavers.example', 'DEVELOPER');
    const page = await newPage();
    await signInAsMember(page, t.baseUrl, developer);
    await page.getByText('dev@weavers.example (developer)').waitFor();
    expect(await nav(page).getByRole('link').allTextContents()).toEqual(['Overview', 'Orders', 'Payment links', 'Disputes', 'Developers', 'Team', 'Security']);
    await navLink(page, 'Developers').click();
    await page.getByRole('heading', { name: 'API keys' }).waitFor();
    await page.getByLabel('Public key', { exact: true }).waitFor();
    expect(await page.getByLabel('Private key', { exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Rotate signing secret' }).count()).toBe(0);
    await navLink(page, 'Team').click();
    await page.getByText('Signed in as').waitFor();
    expect(await page.getByRole('button', { name: 'Invite' }).count()).toBe(0);
    await page.context().close();
  }, 60_000);

  it('lets an owner who works in live untick "Test only": the developer invited with the test key then works in live too', async () => {
    await owner.reload();
    const row = memberRow('dev@weavers.example');
    await row.locator('[data-test-only]').waitFor();
    const form = owner.getByRole('form', { name: 'Role of dev@weavers.example' });
    await form.getByLabel('dev@weavers.example works in test only').uncheck();
    await form.getByRole('button', { name: 'Change role' }).click();
    await row.locator('[data-test-only]').waitFor({ state: 'detached' });
    const members = await request(t.baseUrl, 'POST', '/graphql', { apiKey: m.keys.live.privateKey, body: { query: '{ members { email role testOnly } }' } });
    expect(members.body.data.members).toContainEqual({ email: 'dev@weavers.example', role: 'DEVELOPER', testOnly: false });
  }, 30_000);

  it('removes a member after a confirmation: their open dashboard goes back to sign-in', async () => {
    await owner.reload();
    await memberRow(INVITEE).getByRole('button', { name: 'Remove' }).click();
    const dialog = owner.getByRole('alertdialog');
    expect(await dialog.textContent()).toContain(`Remove ${INVITEE} from the team?`);
    await dialog.getByRole('button', { name: 'Yes, remove' }).click();
    await memberRow(INVITEE).waitFor({ state: 'detached' });
    await invitee.getByLabel('Password').waitFor({ timeout: 10_000 });
    const members = await request(t.baseUrl, 'POST', '/graphql', { apiKey: m.keys.test.privateKey, body: { query: '{ members { email } }' } });
    expect(members.body.data.members.map((x: { email: string }) => x.email)).not.toContain(INVITEE);
  }, 30_000);
});
