import { createClient, type Client } from 'graphql-ws';
import type { ActionClass } from '../../src/merchants/action-class';

/**
 * The dashboard's only ways to the service: the session endpoints (sign-in/out) and the
 * public GraphQL API, over HTTP (fetch) and graphql-ws. A member signs in with their email and
 * password (no api-key signs in); requests are authenticated by the httpOnly session cookie
 * plus the session's CSRF token, which lives in this module's memory only.
 */

export type Environment = 'test' | 'live';

export interface Session {
  csrfToken: string;
  environments: Environment[];
  expiresAt: string;
  merchantName: string;
  /** The member signed in, with the role the session was opened with. */
  member: { email: string; role: string };
  /** The action classes the role allows, as the service's permission table says: the pages and buttons shown. */
  actions: ActionClass[];
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

let session: Session | null = null;
let environment: Environment = 'test';
let socket: Client | null = null;
const listeners = new Set<() => void>();

/** Called when the session is found to be over (signed out, expired, the member's role changed or they were removed). */
export function onSignedOut(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export const currentSession = (): Session | null => session;

/** Whether the signed-in member's role allows actions of this class (the service decides; this only hides what it would refuse). */
export const may = (action: ActionClass): boolean => session?.actions.includes(action) ?? false;
export const currentEnvironment = (): Environment => environment;

export function setEnvironment(env: Environment): void {
  if (env === environment) return;
  environment = env;
  closeSocket();
}

function closeSocket(): void {
  socket?.dispose();
  socket = null;
}

async function json(response: Response): Promise<any> {
  try {
    return await response.json();
  } catch {
    return {};
  }
}

/** The session of this browser, if any (after a reload the cookie is still there; the CSRF token is fetched again). */
export async function loadSession(): Promise<Session | null> {
  const response = await fetch('/dashboard/session', { credentials: 'same-origin' });
  if (!response.ok) return (session = null);
  session = await json(response);
  if (session && !session.environments.includes(environment)) environment = session.environments[0]!;
  return session;
}

/** The sign-in answer when the member has two-step sign-in on and the code is missing or wrong. */
export const CODE_REQUIRED = 'CODE_REQUIRED';

/**
 * Signs a member in with their email and password (and the code of their authenticator app, or
 * a recovery code, when two-step sign-in is on): one session for both environments. Throws an
 * ApiError with code CODE_REQUIRED when the service asks for the code.
 */
export async function signIn(email: string, password: string, code?: string): Promise<Session> {
  const response = await fetch('/dashboard/session', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(code ? { email, password, code } : { email, password }),
  });
  const body = await json(response);
  if (!response.ok) throw new ApiError(body.message ?? 'Sign-in failed.', body.codeRequired ? CODE_REQUIRED : undefined);
  session = {
    csrfToken: body.csrfToken,
    environments: body.environments,
    expiresAt: body.expiresAt,
    merchantName: body.merchantName,
    member: body.member,
    actions: body.actions,
  };
  environment = body.environment;
  closeSocket();
  return session;
}

export async function signOut(): Promise<void> {
  const csrf = session?.csrfToken ?? '';
  await fetch('/dashboard/session', { method: 'DELETE', credentials: 'same-origin', headers: { 'x-csrf-token': csrf } });
  ended();
}

function ended(): void {
  session = null;
  closeSocket();
  for (const listener of listeners) listener();
}

/** One GraphQL operation over HTTP, as the signed-in session in the environment in view. */
export async function gql<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const response = await fetch('/graphql', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', 'x-csrf-token': session?.csrfToken ?? '', 'x-environment': environment },
    body: JSON.stringify({ query, variables }),
  });
  const body = await json(response);
  const error = body.errors?.[0];
  if (error) {
    const code = error.extensions?.code as string | undefined;
    if (code === 'UNAUTHENTICATED') ended();
    throw new ApiError(error.message ?? 'The request failed.', code);
  }
  if (!response.ok) throw new ApiError(`The request failed (HTTP ${response.status}).`);
  return body.data as T;
}

/** The session as the service knows it now: when it is over, the page goes back to sign-in. */
async function recheck(): Promise<void> {
  if (!session) return;
  const response = await fetch('/dashboard/session', { credentials: 'same-origin' }).catch(() => null);
  if (response?.status === 401 && session) ended();
}

/**
 * The socket is kept open while signed in (not only while a page subscribes): the service closes
 * it (4403) the moment the session stops working, e.g. when the member's role changes or they are
 * removed, and the page then goes back to sign-in at once instead of at its next request.
 */
function client(): Client {
  if (socket) return socket;
  const url = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/graphql`;
  const env = environment;
  socket = createClient({
    url,
    lazy: false,
    retryAttempts: 20,
    // The cookie goes with the upgrade; the CSRF token and the environment go here.
    connectionParams: () => ({ 'csrf-token': session?.csrfToken ?? '', environment: env }),
    shouldRetry: () => session !== null,
    onNonLazyError: () => undefined,
    on: {
      closed: (event) => {
        if ((event as { code?: number }).code === 4403) void recheck();
      },
    },
  });
  return socket;
}

/** Opens the session's socket (in the environment in view) if it is not open yet. */
export function keepConnected(): void {
  if (session) client();
}

/** A GraphQL subscription; returns the function that stops it. */
export function subscribe<T = any>(query: string, variables: Record<string, unknown>, next: (data: T) => void): () => void {
  return client().subscribe<T>(
    { query, variables },
    {
      next: (result) => {
        if (result.data) next(result.data as T);
      },
      error: () => undefined,
      complete: () => undefined,
    },
  );
}
