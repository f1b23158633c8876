import './style.css';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  currentEnvironment,
  keepConnected,
  loadSession,
  may,
  onSignedOut,
  setEnvironment,
  signIn,
  signOut,
  ApiError,
  CODE_REQUIRED,
  type Environment,
  type Session,
} from './api';
import type { ActionClass } from '../../src/merchants/action-class';
import { Link, messageOf, useLocation } from './ui';
import { Overview } from './overview';
import { OrderPage, Orders } from './orders';
import { LinkEditor, PaymentLinks } from './links';
import { Developers } from './developers';
import { AuditLog } from './audit';
import { Team } from './team';
import { accountPage } from './account-pages';
import { Security } from './security';
import { Disputes } from './disputes';

/** Members sign in with their email and password; no api-key signs in to the dashboard. */
function SignIn(props: { onSignedIn: (s: Session) => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // The password was right and the member has two-step sign-in on: the form asks for the code too.
  const [needsCode, setNeedsCode] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const codeInput = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  useEffect(() => {
    if (needsCode) codeInput.current?.focus();
  }, [needsCode]);
  return (
    <main class="signin" id="main">
      <h1>Sign in</h1>
      <p>Merchant dashboard: sign in with your email and password.</p>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget as HTMLFormElement;
          const data = new FormData(form);
          const text = (name: string) => (data.get(name) as string | null) ?? '';
          setBusy(true);
          setError(undefined);
          try {
            if (!text('email').trim() || !text('password')) throw new Error('Enter your email and password.');
            const s = await signIn(text('email').trim(), text('password'), text('code').trim() || undefined);
            form.reset();
            props.onSignedIn(s);
          } catch (err) {
            setError(messageOf(err));
            if (err instanceof ApiError && err.code === CODE_REQUIRED) {
              setNeedsCode(true);
              const code = codeInput.current;
              if (code) {
                code.value = '';
                code.focus();
              }
            } else input.current?.focus();
          } finally {
            setBusy(false);
          }
        }}
      >
        <label for="email">Email</label>
        <input
          ref={input}
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          spellcheck={false}
          defaultValue={new URLSearchParams(location.search).get('email') ?? ''}
        />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" aria-describedby={error ? 'signin-error' : undefined} />
        {needsCode && (
          <>
            <label for="code">Authentication code</label>
            <input ref={codeInput} id="code" name="code" inputMode="numeric" autocomplete="one-time-code" spellcheck={false} aria-describedby="code-help" />
            <p class="muted" id="code-help">
              The six-digit code of your authenticator app, or one of your recovery codes.
            </p>
          </>
        )}
        <p>
          <Link href="/dashboard/forgot-password">Forgot password?</Link>
        </p>
        <div class="actions">
          <button type="submit" disabled={busy}>
            Sign in
          </button>
        </div>
        {error && (
          <p class="error" role="alert" id="signin-error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}

/** The environments the session reaches (a member who works in test only sees Test alone). */
function EnvironmentSwitch(props: { environment: Environment; environments: Environment[]; onSwitch: (env: Environment) => void }) {
  return (
    <div class="env-switch" role="group" aria-label="Environment">
      {(['test', 'live'] as const)
        .filter((env) => props.environments.includes(env))
        .map((env) => (
          <button type="button" class={`env env-${env}`} aria-pressed={props.environment === env} onClick={() => props.onSwitch(env)}>
            {env === 'test' ? 'Test' : 'Live'}
          </button>
        ))}
    </div>
  );
}

/** The pages, each with the action class its role needs (the service's permission table says which roles have it). */
const PAGES: [href: string, label: string, needs: ActionClass | null][] = [
  ['/dashboard', 'Overview', 'read'],
  ['/dashboard/orders', 'Orders', 'read'],
  ['/dashboard/links', 'Payment links', 'read'],
  ['/dashboard/disputes', 'Disputes', 'read'],
  ['/dashboard/developers', 'Developers', 'developers'],
  ['/dashboard/team', 'Team', null],
  ['/dashboard/audit', 'Audit log', 'secrets'],
  // A member's own account: every member has one.
  ['/dashboard/security', 'Security', null],
];

function pageOf(path: string) {
  let m: RegExpExecArray | null;
  if (path === '/dashboard') return <Overview />;
  if (path === '/dashboard/orders') return <Orders />;
  if ((m = /^\/dashboard\/orders\/(.+)$/.exec(path))) return <OrderPage reference={decodeURIComponent(m[1]!)} />;
  if (path === '/dashboard/links') return <PaymentLinks />;
  if (path === '/dashboard/links/new') return <LinkEditor />;
  if ((m = /^\/dashboard\/links\/(\d+)$/.exec(path))) return <LinkEditor id={Number(m[1])} />;
  if (path === '/dashboard/disputes') return <Disputes />;
  if (path === '/dashboard/developers') return <Developers />;
  if (path === '/dashboard/team') return <Team />;
  if (path === '/dashboard/audit') return <AuditLog />;
  if (path === '/dashboard/security') return <Security />;
  return <p>Page not found.</p>;
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [environment, setEnv] = useState<Environment>(currentEnvironment());
  const { path } = useLocation();

  useEffect(() => {
    loadSession().then(
      (s) => {
        setSession(s);
        setEnv(currentEnvironment());
      },
      () => setSession(null),
    );
    return onSignedOut(() => setSession(null));
  }, []);
  // Connected while signed in: the service closes the socket the moment the session stops working.
  useEffect(() => keepConnected(), [session, environment]);

  // Invitations, password resets: pages for someone not signed in, whatever the session.
  const account = accountPage(path);
  if (account) return account;
  if (session === undefined) return <p class="loading">Loading…</p>;
  const signedIn = (s: Session) => {
    setSession({ ...s });
    setEnv(currentEnvironment());
  };
  if (!session) return <SignIn onSignedIn={signedIn} />;

  const switchTo = (env: Environment) => {
    if (env === environment || !session.environments.includes(env)) return;
    setEnvironment(env);
    setEnv(env);
  };

  const nav = PAGES.filter(([, , needs]) => needs === null || may(needs));
  const section = path.startsWith('/dashboard/orders') ? '/dashboard/orders' : path.startsWith('/dashboard/links') ? '/dashboard/links' : path;
  const needed = PAGES.find(([href]) => href === section)?.[2];
  const page = needed && !may(needed) ? <p role="status">Your role ({session.member.role.toLowerCase()}) does not allow this page.</p> : pageOf(path);

  return (
    <div class={`shell env-${environment}-shell`}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="brand">
          <strong>{session.merchantName}</strong>
          <span class="muted" data-member-role={session.member.role}>
            {session.member.email} ({session.member.role.toLowerCase()})
          </span>
          <span class={`env-badge env-${environment}`} aria-live="polite">
            {environment === 'live' ? 'Live data' : 'Test data'}
          </span>
        </div>
        <EnvironmentSwitch environment={environment} environments={session.environments} onSwitch={switchTo} />
        <button type="button" class="secondary" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <nav aria-label="Main">
        <ul>
          {nav.map(([href, label]) => (
            <li>
              <Link href={href} current={section === href}>
                {label}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" key={environment}>
        {page}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
