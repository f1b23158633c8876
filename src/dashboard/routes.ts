import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context';
import { sendHtmlPage } from '../shared/html-page';
import { DomainError } from '../shared/errors';
import { failedAuthenticationsBlocked, noteFailedAuthentication, sendTooManyRequests } from '../protection';
import { buildDashboard, dashboardBuilt, dashboardOutDir, DASHBOARD_ASSETS } from './build';
import { clearedSessionCookie, cookieValue, CSRF_HEADER, sameOrigin, sessionCookie, SESSION_COOKIE } from '../merchants/dashboard-session-http';
import { CSRF_REFUSED, KEY_SIGN_IN_REFUSED, type SessionInfo } from '../merchants/dashboard-session.service';
import { registerAuditExport } from './audit-csv';
import { AuthenticationCodeNeeded, SignInsLimited } from '../merchants/member-sign-in';

const ASSET_TYPES: Record<(typeof DASHBOARD_ASSETS)[number], string> = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Dashboard</title>
<link rel="stylesheet" href="/dashboard/assets/app.css">
<script type="module" src="/dashboard/assets/app.js"></script>
</head>
<body>
<div id="app"><noscript>The dashboard needs JavaScript.</noscript></div>
</body>
</html>
`;

const HOST = /^[A-Za-z0-9.\-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/** No inline script or style anywhere; scripts, styles and connections to this service only. */
function contentSecurityPolicy(request: FastifyRequest, publicUrl: string): string {
  const hosts = new Set<string>([new URL(publicUrl).host]);
  const host = request.headers.host;
  if (typeof host === 'string' && HOST.test(host)) hosts.add(host);
  const sockets = [...hosts].flatMap((h) => [`ws://${h}`, `wss://${h}`]).join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    `connect-src 'self' ${sockets}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

/**
 * The merchant dashboard: one page (a Preact app over the public GraphQL API), its two built
 * assets, and the session endpoints that exchange a member's email and password for an
 * httpOnly cookie.
 */
export async function registerDashboard(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const sessions = ctx.services.dashboardSessions;
  const secure = new URL(ctx.config.publicUrl).protocol === 'https:';
  const outDir = dashboardOutDir();
  if (!dashboardBuilt(outDir)) await buildDashboard(outDir);
  const assets = new Map(
    DASHBOARD_ASSETS.map((name) => {
      const body = fs.readFileSync(path.join(outDir, name));
      return [name, { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` }] as const;
    }),
  );

  const sendPage = (request: FastifyRequest, reply: FastifyReply) =>
    sendHtmlPage(reply.header('x-content-type-options', 'nosniff'), contentSecurityPolicy(request, ctx.config.publicUrl), INDEX_HTML);

  const PAGE = { config: { family: 'page' } } as const;
  app.get('/dashboard', PAGE, sendPage);
  app.get('/dashboard/*', PAGE, sendPage);

  app.get<{ Params: { name: string } }>('/dashboard/assets/:name', { config: { quietLog: true } }, async (request, reply) => {
    const asset = assets.get(request.params.name as (typeof DASHBOARD_ASSETS)[number]);
    if (!asset) return reply.code(404).type('text/plain').send('Not found');
    // Revalidated on every load, answered 304 while unchanged: a new build is picked up at once.
    reply.header('cache-control', 'no-cache').header('etag', asset.etag).header('x-content-type-options', 'nosniff');
    if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
    return reply.type(ASSET_TYPES[request.params.name as keyof typeof ASSET_TYPES]).send(asset.body);
  });

  registerAuditExport(app, ctx);

  const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store');

  /** The session as the browser sees it: never the cookie's token. */
  const sessionBody = (info: SessionInfo) => ({
    csrfToken: info.csrfToken,
    environments: info.environments,
    expiresAt: info.expiresAt.toISOString(),
    merchantName: info.merchantName,
    member: info.member,
    actions: info.actions,
  });

  /**
   * Sign-in: a member's `{ email, password, code? }` → the session cookie and `{ csrfToken, environment,
   * environments, expiresAt, merchantName, member, actions }`. No api-key signs in: a body with a
   * `privateKey` is refused (400) with a message saying so. A member with two-step sign-in on and no
   * (or a wrong) `code` gets 401 with `codeRequired: true`.
   */
  app.post<{ Body: { privateKey?: unknown; email?: unknown; password?: unknown; code?: unknown } }>('/dashboard/session', async (request, reply) => {
    noStore(reply);
    // A cross-site page must not sign a browser in (login CSRF): a browser names the page's origin.
    if (request.headers.origin !== undefined && !sameOrigin(request.headers, ctx.config.publicUrl)) {
      return reply.code(403).send({ message: 'Sign in from the dashboard page.' });
    }
    const body = request.body;
    const fields = body && typeof body === 'object' ? body : {};
    if (fields.privateKey !== undefined && fields.email === undefined) return reply.code(400).send({ message: KEY_SIGN_IN_REFUSED });
    // Like a wrong api-key: an IP over its failed-authentication limit gets no answer about passwords.
    const retryAfter = await failedAuthenticationsBlocked(request);
    if (retryAfter !== undefined) return sendTooManyRequests(request, reply, retryAfter);
    try {
      const signedIn = await sessions.signInMember(fields.email, fields.password, fields.code, { ip: request.ip });
      const maxAge = (signedIn.expiresAt.getTime() - ctx.clock.now().getTime()) / 1000;
      reply.header('set-cookie', sessionCookie(signedIn.token, maxAge, secure));
      return { ...sessionBody(signedIn), environment: signedIn.environment };
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      // The account (not the address) is over its limit of wrong passwords.
      if (err instanceof SignInsLimited) return sendTooManyRequests(request, reply, err.retryAfterSeconds);
      // The password was right: the form asks for the code. Only a wrong code is a failed authentication.
      if (err instanceof AuthenticationCodeNeeded) {
        if (err.wrong) await noteFailedAuthentication(request);
        return reply.code(401).send({ message: err.message, code: err.code, codeRequired: true });
      }
      await noteFailedAuthentication(request);
      return reply.code(401).send({ message: err.message });
    }
  });

  /**
   * The session as a page that reloads finds it, and who is signed in: the member, their role and
   * the action classes it allows (the CSRF token included: only same-origin pages can read it).
   */
  app.get('/dashboard/session', async (request, reply) => {
    noStore(reply);
    try {
      return sessionBody(await sessions.describe(cookieValue(request.headers, SESSION_COOKIE)));
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      return reply.code(401).send({ message: 'Not signed in.' });
    }
  });

  /** Sign-out: deletes the session (needs the CSRF token) and clears the cookie. */
  app.delete('/dashboard/session', async (request, reply) => {
    noStore(reply);
    const token = cookieValue(request.headers, SESSION_COOKIE);
    if (token) {
      if (!sessions.csrfMatches(token, request.headers[CSRF_HEADER])) return reply.code(403).send({ message: CSRF_REFUSED });
      await sessions.signOut(token);
    }
    reply.header('set-cookie', clearedSessionCookie(secure));
    return reply.code(204).send();
  });
}
