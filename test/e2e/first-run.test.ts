import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { createScratchDatabase, freePort } from '../support/scratch-database';
import { waitFor } from '../integration/events/helpers';
import { launchBrowser } from '../support/browser';
import { processMarker } from '../support/test-processes';

const ROOT = path.resolve(__dirname, '../..');
const run = promisify(execFile);

interface ServerProcess {
  baseUrl: string;
  child: ChildProcess;
  stdout(): string;
  stop(): Promise<number | null>;
}

/** The environment of a bare machine: nothing but what the test names (no ADMIN_TOKEN, no DATABASE_URL). */
function bareEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...processMarker(),
    ENCRYPTION_KEY_BITS: '2048',
    LOG_LEVEL: 'warn',
    SCHEDULER_INTERVAL_MS: '0',
    ...extra,
  };
}

/** `npm start` without the build step: the built service, as its own process. */
async function startServer(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: ROOT,
    env: bareEnv({ HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: baseUrl, ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  // 'close': the process exited and everything it wrote has been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const server: ServerProcess = {
    baseUrl,
    child,
    stdout: () => out,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      // The service exits within 10 s of SIGTERM; should it not, it is killed rather than left behind.
      let timer: NodeJS.Timeout | undefined;
      const late = await Promise.race([exited.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), 12_000)))]);
      clearTimeout(timer);
      if (late) child.kill('SIGKILL');
      return exited;
    },
  };
  try {
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`service exited (${child.exitCode}): ${err}`);
        // Ready once it listens and has printed what a first run prints (written right after listening).
        return fetch(`${baseUrl}/health`).then(
          (r) => r.ok,
          () => false,
        );
      },
      120_000,
      `${baseUrl}/health`,
    );
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  return server;
}

async function cli(args: string[], env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['dist/src/cli/main.js', ...args], { cwd: ROOT, env: bareEnv(env), timeout: 120_000 });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const failed = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, out: failed.stdout ?? '', err: failed.stderr ?? '' };
  }
}

const KEY = {
  test: { publicKey: /^PGW-PUBLICKEY-TEST-[0-9a-f]{32}$/, privateKey: /^PGW-SECRETKEY-TEST-[0-9a-f]{32}$/ },
  live: { publicKey: /^PGW-PUBLICKEY-LIVE-[0-9a-f]{32}$/, privateKey: /^PGW-SECRETKEY-LIVE-[0-9a-f]{32}$/ },
};

/** The documented `merchant:create --json` output: exactly these keys, in this order. */
function expectCreatedMerchantJson(out: string, name: string) {
  const created = JSON.parse(out);
  expect(Object.keys(created)).toEqual(['subsidiary', 'webhookSecret', 'liveWebhookSecret', 'keys']);
  expect(created.subsidiary).toEqual({ id: expect.any(Number), name, country: 'NG', supportEmail: 'support@acme.test' });
  expect(Object.keys(created.subsidiary)).toEqual(['id', 'name', 'country', 'supportEmail']);
  expect(created.webhookSecret).toMatch(/^whsec_/);
  expect(created.liveWebhookSecret).toMatch(/^whsec_/);
  expect(created.liveWebhookSecret).not.toBe(created.webhookSecret);
  expect(Object.keys(created.keys)).toEqual(['test', 'live']);
  for (const mode of ['test', 'live'] as const) {
    expect(Object.keys(created.keys[mode])).toEqual(['publicKey', 'privateKey', 'encryptionKey']);
    expect(created.keys[mode].publicKey).toMatch(KEY[mode].publicKey);
    expect(created.keys[mode].privateKey).toMatch(KEY[mode].privateKey);
    expect(Buffer.from(created.keys[mode].encryptionKey, 'base64').toString()).toMatch(/^2048!<RSAKeyValue><Modulus>/);
  }
  return created;
}

async function graphql(baseUrl: string, query: string, headers: Record<string, string>) {
  const res = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query }),
  });
  return res.json() as Promise<{ data?: any; errors?: Array<{ message: string }> }>;
}

/**
 * A first run on a bare machine: `npm start` (the built service) on an empty embedded database
 * creates a demo merchant with its owner, a link and an admin token, prints them once, serves a start page and
 * GraphiQL; the CLI creates merchants while the server holds the database.
 */
describe('a first run that leads somewhere', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-first-run-'));
  const servers: ServerProcess[] = [];

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    fs.rmSync(dataDir, { recursive: true, force: true });
  }, 30_000);

  it('seeds a demo once, serves the start page and GraphiQL, and lets the CLI create merchants while it runs', async () => {
    const first = await startServer({ DATA_DIR: dataDir });
    servers.push(first);
    await waitFor(() => first.stdout().includes('Start here:'), 20_000, 'the first-run text');
    const out = first.stdout();

    // The admin token: printed once, kept in DATA_DIR readable by the owner only, and it works.
    const tokenFile = path.join(dataDir, 'admin.token');
    const adminToken = fs.readFileSync(tokenFile, 'utf8').trim();
    expect(fs.statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(out).toContain(`Admin token (x-admin-token): ${adminToken}`);

    // The demo merchant's test keys and link, printed once.
    const publicKey = /public key: +(PGW-PUBLICKEY-TEST-[0-9a-f]{32})/.exec(out)?.[1];
    const privateKey = /private key: +(PGW-SECRETKEY-TEST-[0-9a-f]{32})/.exec(out)?.[1];
    const linkUrl = /Demo payment link: (\S+)/.exec(out)?.[1];
    expect(publicKey).toBeDefined();
    expect(privateKey).toBeDefined();
    expect(linkUrl).toMatch(new RegExp(`^${first.baseUrl}/pay/PL[0-9A-Z]+$`));
    const merchant = await graphql(
      first.baseUrl,
      '{ merchant { subsidiary { name } environment } paymentLinks(first: 5) { totalCount edges { node { paymentLinkUrl } } } }',
      { 'api-key': privateKey! },
    );
    expect(merchant.errors).toBeUndefined();
    expect(merchant.data.merchant).toEqual({ subsidiary: { name: 'Demo Store' }, environment: 'TEST' });
    expect(merchant.data.paymentLinks.edges.map((e: any) => e.node.paymentLinkUrl)).toEqual([linkUrl]);
    // The demo owner: printed once with the keys, and signs in to the dashboard with that password.
    expect(out).toContain(`Demo owner, to sign in to the dashboard at ${first.baseUrl}/dashboard:`);
    const ownerEmail = /email: +(\S+@\S+)/.exec(out)?.[1];
    const ownerPassword = /password: +(\S+)/.exec(out)?.[1];
    expect(ownerEmail).toBe('owner@demo.example');
    expect(ownerPassword).toMatch(/^[A-Za-z0-9_-]{20}$/);
    const ownerSession = await fetch(`${first.baseUrl}/dashboard/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ownerEmail, password: ownerPassword }),
    });
    expect(ownerSession.status).toBe(200);
    expect(await ownerSession.json()).toMatchObject({ merchantName: 'Demo Store', member: { email: 'owner@demo.example', role: 'OWNER' } });
    const wrongOwnerPassword = await fetch(`${first.baseUrl}/dashboard/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: ownerEmail, password: `${ownerPassword}x` }),
    });
    expect(wrongOwnerPassword.status).toBe(401);
    expect(fs.readFileSync(path.join(dataDir, 'demo.json'), 'utf8')).not.toContain(ownerPassword!);
    const checkout = await fetch(linkUrl!);
    expect(checkout.status).toBe(200);
    expect(await checkout.text()).toContain('Demo T-shirt');

    // The start page: strict CSP, links to the docs, GraphiQL, the demo checkout and the dashboard.
    const landing = await fetch(`${first.baseUrl}/`);
    expect(landing.status).toBe(200);
    expect(landing.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = landing.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await landing.text();
    for (const href of ['/docs', '/graphiql', '/dashboard', new URL(linkUrl!).pathname]) expect(html).toContain(`href="${href}"`);
    expect(html).not.toMatch(/<script>|<style>| style=/); // nothing inline
    expect((await fetch(`${first.baseUrl}/docs`, { redirect: 'follow' })).status).toBe(200);

    // GraphiQL's files come from this server (npm packages), none from elsewhere.
    const graphiqlPage = await fetch(`${first.baseUrl}/graphiql`);
    const graphiqlCsp = graphiqlPage.headers.get('content-security-policy') ?? '';
    expect(graphiqlCsp).toContain("script-src 'self'");
    expect(graphiqlCsp).toContain("connect-src 'self'");
    expect(graphiqlCsp).not.toMatch(/unsafe-|\*/);
    const graphiqlHtml = await graphiqlPage.text();
    const sources = [...graphiqlHtml.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(sources.length).toBeGreaterThanOrEqual(6);
    for (const source of sources) {
      expect(source.startsWith('/')).toBe(true);
      // Read each body: a response nobody reads stays in flight, and shutdown waits for it.
      const asset = await fetch(`${first.baseUrl}${source}`);
      await asset.arrayBuffer();
      expect(asset.status).toBe(200);
    }
    expect((await fetch(`${first.baseUrl}/graphiql/..%2Fpackage.json`)).status).toBe(404);

    // The CLI while the server holds the embedded database: same JSON, a merchant whose keys work.
    const created = await cli(['merchant:create', '--name', 'Acme Stores', '--country', 'NG', '--email', 'support@acme.test', '--json'], { DATA_DIR: dataDir });
    expect(created.err).toBe('');
    expect(created.code).toBe(0);
    const acme = expectCreatedMerchantJson(created.out, 'Acme Stores');
    const acmeView = await graphql(first.baseUrl, '{ merchant { subsidiary { id name } } }', { 'api-key': acme.keys.live.privateKey });
    expect(acmeView.data?.merchant.subsidiary).toEqual({ id: acme.subsidiary.id, name: 'Acme Stores' });
    // Bad input: the documented message and exit code 65, as without a server.
    const refused = await cli(['merchant:create', '--name', 'X', '--country', 'NG', '--email', 'support@acme.test', '--fee-bearer', 'nobody'], {
      DATA_DIR: dataDir,
    });
    expect(refused).toMatchObject({ code: 65, out: '', err: 'error: FeeBearer is currently not supported.\n' });
    // A wrong admin token is refused by the server, not silently ignored.
    const wrongToken = await cli(['merchant:create', '--name', 'X', '--country', 'NG', '--email', 'support@acme.test'], {
      DATA_DIR: dataDir,
      ADMIN_TOKEN: 'not-the-admin-token-at-all',
    });
    expect(wrongToken.code).toBe(1);
    expect(wrongToken.err).toContain('refused');

    // GraphiQL in a real browser: the schema loads, a query runs with the pasted key, and the CSP holds.
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
      page.on('pageerror', (e) => problems.push(e.message));
      page.on('response', (r) => r.status() >= 400 && problems.push(`${r.status()} ${r.url()}`));
      page.on('request', (r) => !r.url().startsWith(first.baseUrl) && !r.url().startsWith('data:') && problems.push(`outside request ${r.url()}`));
      await page.goto(`${first.baseUrl}/graphiql`);
      await page.waitForSelector('.graphiql-container', { timeout: 30_000 });
      await page.fill('#api-key', publicKey!);
      await page.click('.graphiql-execute-button');
      await page.waitForFunction(() => document.querySelector('.result-window')?.textContent?.includes('Demo T-shirt'), undefined, { timeout: 20_000 });
      // The documentation explorer is built from the introspected schema.
      await page.click('[aria-label="Show Documentation Explorer"]');
      await page.waitForSelector('text=Root Types', { timeout: 10_000 });
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }

    // A restart: no demo again, no keys printed again, the same admin token.
    const firstExit = await first.stop();
    if (firstExit !== 0) process.stderr.write(`the first server's last output:\n${first.stdout().split('\n').slice(-30).join('\n')}\n`);
    expect(firstExit).toBe(0);
    expect(fs.existsSync(path.join(dataDir, 'server.json'))).toBe(false);
    const second = await startServer({ DATA_DIR: dataDir });
    servers.push(second);
    const again = await graphql(second.baseUrl, '{ merchant { subsidiary { id } } }', { 'x-admin-token': adminToken, 'api-key': privateKey! });
    expect(again.data?.merchant.subsidiary.id).toBe(1);
    expect(await (await fetch(`${second.baseUrl}/`)).text()).toContain(`href="${new URL(linkUrl!).pathname}"`);
    expect(await second.stop()).toBe(0);
    // Everything the second server ever wrote, read to its end once it exited.
    expect(second.stdout()).not.toContain('first run');
    expect(second.stdout()).not.toMatch(/PGW-SECRETKEY|whsec_|Admin token|Demo owner/);

    // With no server running the CLI opens the database itself: the same JSON.
    const offline = await cli(['merchant:create', '--name', 'Offline Ltd', '--country', 'NG', '--email', 'support@acme.test', '--json'], { DATA_DIR: dataDir });
    expect(offline.code).toBe(0);
    expect(expectCreatedMerchantJson(offline.out, 'Offline Ltd').subsidiary.id).toBe(acme.subsidiary.id + 1);
  }, 400_000);

  it('seeds nothing on a PostgreSQL server unless DEMO_MERCHANT=true', async () => {
    const scratch = await createScratchDatabase('first_run');
    const pgDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-first-run-pg-'));
    try {
      const env = { DATABASE_URL: scratch.url, DATA_DIR: pgDataDir, MASTER_KEY: 'ab'.repeat(32) };
      const plain = await startServer(env);
      servers.push(plain);
      expect(plain.stdout()).not.toContain('first run');
      expect(await (await fetch(`${plain.baseUrl}/`)).text()).not.toContain('/pay/');
      expect(fs.existsSync(path.join(pgDataDir, 'admin.token'))).toBe(false);
      expect(await plain.stop()).toBe(0);

      const asked = await startServer({ ...env, DEMO_MERCHANT: 'true', ADMIN_TOKEN: 'an-admin-token-of-the-operator' });
      servers.push(asked);
      await waitFor(() => asked.stdout().includes('Start here:'), 20_000, 'the first-run text');
      expect(asked.stdout()).toContain('Demo merchant 1 (Demo Store)');
      expect(asked.stdout()).not.toContain('Admin token'); // ADMIN_TOKEN given: nothing generated, nothing printed
      expect(fs.existsSync(path.join(pgDataDir, 'admin.token'))).toBe(false);
      expect(await asked.stop()).toBe(0);
    } finally {
      fs.rmSync(pgDataDir, { recursive: true, force: true });
      await scratch.drop();
    }
  }, 240_000);
});
