import type { IncomingHttpHeaders } from 'node:http';
import type { SessionCredentials } from './dashboard-session.service';

/** The dashboard session cookie. */
export const SESSION_COOKIE = 'pgw_dashboard';
/** The header a cookie-authenticated GraphQL request carries the session's CSRF token in. */
export const CSRF_HEADER = 'x-csrf-token';
/** The header naming the environment in view (`test` or `live`) on cookie-authenticated requests. */
export const ENVIRONMENT_HEADER = 'x-environment';

/** The value of one cookie of the request; undefined when absent. */
export function cookieValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const raw = headers.cookie;
  if (typeof raw !== 'string') return undefined;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || undefined;
  }
  return undefined;
}

export function sessionCookie(token: string, maxAgeSeconds: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The session credentials of an HTTP request that carries the session cookie and no api-key
 * (an api-key always wins); undefined otherwise.
 */
export function sessionCredentialsOf(headers: IncomingHttpHeaders): SessionCredentials | undefined {
  if (single(headers['api-key']) !== undefined) return undefined;
  const token = cookieValue(headers, SESSION_COOKIE);
  if (!token) return undefined;
  return { token, csrfToken: single(headers[CSRF_HEADER]), environment: single(headers[ENVIRONMENT_HEADER]) };
}

/**
 * Whether the request's Origin is this service: the public URL's origin, or the origin of the
 * Host the request was sent to. Browsers always send Origin on WebSocket upgrades and on
 * cross-site POSTs, and a page cannot forge it.
 */
export function sameOrigin(headers: IncomingHttpHeaders, publicUrl: string): boolean {
  const origin = single(headers.origin);
  if (!origin) return false;
  if (origin === new URL(publicUrl).origin) return true;
  const host = single(headers.host);
  if (!host) return false;
  return origin === `http://${host}` || origin === `https://${host}`;
}
