import 'reflect-metadata';
import { ManualClock } from '../../../src/shared/clock';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { ownerOf, type TestMember } from '../../support/members';
import { closedWithin, WsSession } from '../graphql/ws-session';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { KEY_SIGN_IN_REFUSED } from '../../../src/merchants/dashboard-session.service';

const MERCHANT = '{ merchant { environment subsidiary { name } } }';

describe('dashboard sessions', () => {
  let t: TestService;
  let clock: ManualClock;
  let m: CreatedMerchant;
  let owner: TestMember;

  beforeAll(async () => {
    clock = new ManualClock(new Date());
    t = await startTestService({ DASHBOARD_SESSION_TTL_SECONDS: '600' }, { clock });
    m = await createTestMerchant(t);
    owner = await ownerOf(t.baseUrl, m);
  });
  afterAll(async () => t.close());
  // A test that moves the clock leaves the real time to the next one, even when it fails.
  afterEach(() => clock.set(new Date()));

  async function signIn(member: { email: string; password: string } = owner) {
    return request(t.baseUrl, 'POST', '/dashboard/session', { body: { email: member.email, password: member.password } });
  }
  function cookieOf(setCookie: string | null): string {
    return setCookie!.split(';')[0]!;
  }
  function gql(query: string, headers: Record<string, string>) {
    return request(t.baseUrl, 'POST', '/graphql', { body: { query }, headers });
  }

  it('exchanges the email and password for an httpOnly, SameSite=Strict cookie and never returns the password', async () => {
    const res = await signIn();
    expect(res.status).toBe(200);
    const setCookie = res.headers.get('set-cookie')!;
    expect(setCookie).toMatch(/^pgw_dashboard=[A-Za-z0-9_-]{43}; /);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Strict');
    expect(setCookie).toContain('Path=/');
    expect(setCookie).toContain('Max-Age=600');
    expect(setCookie).not.toContain('Secure'); // PUBLIC_URL is http:// here
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.body).toEqual({
      csrfToken: expect.any(String),
      environment: 'test',
      environments: ['test', 'live'],
      expiresAt: expect.any(String),
      merchantName: m.subsidiary.name,
      member: { email: owner.email, role: 'OWNER' },
      actions: ['client', 'read', 'links.write', 'payments.write', 'developers', 'secrets', 'members'],
    });
    expect(res.text).not.toContain(owner.password);
    // Only the token's hash is stored.
    const token = cookieOf(setCookie).split('=')[1]!;
    const rows = await t.service.runtime.ctx.orm.em
      .getConnection()
      .execute(`select token_hash from dashboard_session where token_hash = encode(sha256(?::bytea), 'hex')`, [token]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('refuses every api-key, even a working private key, saying that members sign in with their email and password', async () => {
    for (const privateKey of [m.keys.test.privateKey, m.keys.live.privateKey, m.keys.test.publicKey, 'PGW-SECRETKEY-TEST-00000000000000000000000000000000']) {
      const res = await request(t.baseUrl, 'POST', '/dashboard/session', { body: { privateKey } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ message: KEY_SIGN_IN_REFUSED });
      expect(res.body.message).toContain('email and password');
      expect(res.headers.get('set-cookie')).toBeNull();
    }
    // Nor does a key in the password's place.
    const asPassword = await request(t.baseUrl, 'POST', '/dashboard/session', { body: { email: owner.email, password: m.keys.test.privateKey } });
    expect(asPassword.status).toBe(401);
    expect(asPassword.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a sign-in posted from another origin', async () => {
    const res = await request(t.baseUrl, 'POST', '/dashboard/session', {
      body: { email: owner.email, password: owner.password },
      headers: { origin: 'https://evil.example' },
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('authenticates GraphQL with the cookie only together with the CSRF token', async () => {
    const res = await signIn();
    const cookie = cookieOf(res.headers.get('set-cookie'));
    const ok = await gql(MERCHANT, { cookie, 'x-csrf-token': res.body.csrfToken, 'x-environment': 'test' });
    expect(ok.body.data.merchant).toEqual({ environment: 'TEST', subsidiary: { name: m.subsidiary.name } });

    const missing = await gql(MERCHANT, { cookie });
    expect(missing.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const wrong = await gql(MERCHANT, { cookie, 'x-csrf-token': 'x'.repeat(43) });
    expect(wrong.body.errors[0].extensions.code).toBe('FORBIDDEN');
    const otherSession = await signIn();
    const mixed = await gql(MERCHANT, { cookie, 'x-csrf-token': otherSession.body.csrfToken });
    expect(mixed.body.errors[0].extensions.code).toBe('FORBIDDEN');

    // A reloaded page gets the CSRF token again from the cookie.
    const again = await request(t.baseUrl, 'GET', '/dashboard/session', { headers: { cookie } });
    expect(again.status).toBe(200);
    expect(again.body.csrfToken).toBe(res.body.csrfToken);
    expect((await request(t.baseUrl, 'GET', '/dashboard/session')).status).toBe(401);
  });

  it('reaches both environments of the merchant, one at a time: the environment in view must be named', async () => {
    const res = await signIn();
    const headers = { cookie: cookieOf(res.headers.get('set-cookie')), 'x-csrf-token': res.body.csrfToken };
    expect((await gql(MERCHANT, { ...headers, 'x-environment': 'live' })).body.data.merchant.environment).toBe('LIVE');
    expect((await gql(MERCHANT, { ...headers, 'x-environment': 'test' })).body.data.merchant.environment).toBe('TEST');
    expect((await gql(MERCHANT, headers)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect((await gql(MERCHANT, { ...headers, 'x-environment': 'staging' })).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('an api-key header wins over a cookie', async () => {
    const res = await signIn();
    const cookie = cookieOf(res.headers.get('set-cookie'));
    const other = await createTestMerchant(t);
    const r = await gql('{ merchant { subsidiary { name } } }', { cookie, 'x-csrf-token': res.body.csrfToken, 'api-key': other.keys.test.privateKey });
    expect(r.body.data.merchant.subsidiary.name).toBe(other.subsidiary.name);
  });

  it('signs out: needs the CSRF token, deletes the session and clears the cookie', async () => {
    const res = await signIn();
    const cookie = cookieOf(res.headers.get('set-cookie'));
    expect((await request(t.baseUrl, 'DELETE', '/dashboard/session', { headers: { cookie } })).status).toBe(403);
    const out = await request(t.baseUrl, 'DELETE', '/dashboard/session', { headers: { cookie, 'x-csrf-token': res.body.csrfToken } });
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^pgw_dashboard=; Path=\/; Max-Age=0; HttpOnly; SameSite=Strict/);
    const after = await gql(MERCHANT, { cookie, 'x-csrf-token': res.body.csrfToken });
    expect(after.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it('expires after DASHBOARD_SESSION_TTL_SECONDS', async () => {
    const res = await signIn();
    const cookie = cookieOf(res.headers.get('set-cookie'));
    const headers = { cookie, 'x-csrf-token': res.body.csrfToken, 'x-environment': 'test' };
    clock.advance(599_000);
    expect((await gql(MERCHANT, headers)).body.data.merchant.environment).toBe('TEST');
    clock.advance(2_000);
    expect((await gql(MERCHANT, headers)).body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    expect((await request(t.baseUrl, 'GET', '/dashboard/session', { headers: { cookie } })).status).toBe(401);
  });

  it("goes on when the merchant's private key is rotated: a member's session hangs on no key", async () => {
    const merchant = await createTestMerchant(t);
    const res = await signIn(await ownerOf(t.baseUrl, merchant));
    const headers = { cookie: cookieOf(res.headers.get('set-cookie')), 'x-csrf-token': res.body.csrfToken, 'x-environment': 'test' };
    const rotate = await request(t.baseUrl, 'POST', '/graphql', {
      apiKey: merchant.keys.test.privateKey,
      body: { query: 'mutation { rotateKeys(input: { keys: [PRIVATE], graceSeconds: 0 }) { privateKey } }' },
    });
    expect(rotate.body.errors).toBeUndefined();
    expect((await gql(MERCHANT, headers)).body.data.merchant.environment).toBe('TEST');
  });

  it('lists the api-keys as hints only', async () => {
    const merchant = await createTestMerchant(t);
    const r = await request(t.baseUrl, 'POST', '/graphql', { apiKey: merchant.keys.test.privateKey, body: { query: '{ apiKeys { kind hint expiresAt } }' } });
    expect(r.body.data.apiKeys).toHaveLength(2);
    expect(r.text).not.toContain(merchant.keys.test.privateKey);
    expect(r.body.data.apiKeys.map((k: { kind: string }) => k.kind).sort()).toEqual(['private', 'public']);
    const pub = await request(t.baseUrl, 'POST', '/graphql', { apiKey: merchant.keys.test.publicKey, body: { query: '{ apiKeys { kind } }' } });
    expect(pub.body.errors[0].extensions.code).toBe('FORBIDDEN');
  });

  it('serves the page (deep links too) with a strict CSP, and the built assets with revalidation', async () => {
    for (const path of ['/dashboard', '/dashboard/orders/ORD-1']) {
      const page = await request(t.baseUrl, 'GET', path);
      expect(page.status).toBe(200);
      expect(page.text).toContain('<script type="module" src="/dashboard/assets/app.js"></script>');
      expect(page.text).not.toMatch(/<script>|<style|style=/);
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toContain("default-src 'self'; script-src 'self'; style-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('unsafe');
    }
    const js = await request(t.baseUrl, 'GET', '/dashboard/assets/app.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const etag = js.headers.get('etag')!;
    expect((await request(t.baseUrl, 'GET', '/dashboard/assets/app.js', { headers: { 'if-none-match': etag } })).status).toBe(304);
    expect((await request(t.baseUrl, 'GET', '/dashboard/assets/app.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await request(t.baseUrl, 'GET', '/dashboard/assets/__proto__')).status).toBe(404);
  });

  it('counts wrong passwords as failed authentications: over the limit, even the right password waits', async () => {
    const limited = await startTestService({ RATE_LIMIT_AUTH_FAILURES: '3' });
    try {
      const member = await ownerOf(limited.baseUrl, await createTestMerchant(limited));
      const post = (password: string) => request(limited.baseUrl, 'POST', '/dashboard/session', { body: { email: member.email, password } });
      for (let i = 0; i < 3; i++) expect((await post('not the right password')).status).toBe(401);
      const refused = await post(member.password);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refused.headers.get('set-cookie')).toBeNull();
    } finally {
      await limited.close();
    }
  });

  describe('over graphql-ws', () => {
    it('accepts the cookie from the service’s own origin with the CSRF token', async () => {
      const res = await signIn();
      const cookie = cookieOf(res.headers.get('set-cookie'));
      const ws = await WsSession.open(t.baseUrl, { 'csrf-token': res.body.csrfToken, environment: 'test' }, { cookie, origin: t.baseUrl });
      expect(ws.messages[0]!.type).toBe('connection_ack');
      ws.subscribe('1', MERCHANT);
      expect((await ws.result('1')).payload.data.merchant.environment).toBe('TEST');
      ws.close();
    });

    it('refuses the cookie from another origin, without an origin, or without the CSRF token', async () => {
      const res = await signIn();
      const cookie = cookieOf(res.headers.get('set-cookie'));
      const attempts: [Record<string, unknown>, Record<string, string>][] = [
        [{ 'csrf-token': res.body.csrfToken }, { cookie, origin: 'https://evil.example' }],
        [{ 'csrf-token': res.body.csrfToken }, { cookie }],
        [{}, { cookie, origin: t.baseUrl }],
        [
          { 'csrf-token': res.body.csrfToken, environment: 'staging' },
          { cookie, origin: t.baseUrl },
        ],
      ];
      for (const [params, headers] of attempts) {
        const ws = await WsSession.open(t.baseUrl, params, headers);
        expect(await closedWithin(ws, 3000)).toEqual({ code: 4403, reason: 'Forbidden' });
      }
    });
  });
});
