import './style.css';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  currentEnvironment,
  currentSession,
  loadSession,
  onSignedOut,
  setEnvironment,
  signIn,
  signInMember,
  signOut,
  ApiError,
  CODE_REQUIRED,
  type Environment,
  type Session,
} from './api';
import { Link, messageOf, useLocation } from './ui';
import { Overview } from './overview';
import { OrderPage, Orders } from './orders';
import { LinkEditor, PaymentLinks } from './links';
import { Developers } from './developers';
import { AuditLog } from './audit';
import { Security } from './security';

function SignIn(props: { environment?: Environment; onSignedIn: (s: Session) => void; onCancel?: () => void }) {
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
  // Adding an environment to a session opened with a private key takes that environment's key.
  const withKeyOnly = props.environment !== undefined;
  const label = props.environment ? `${props.environment === 'live' ? 'Live' : 'Test'} environment` : 'Merchant dashboard';
  return (
    <main class="signin" id="main">
      <h1>Sign in</h1>
      <p>
        {label}:{' '}
        {withKeyOnly
          ? 'sign in with your private key. It is exchanged for a session and is not stored in this browser.'
          : 'sign in with your email and password.'}
      </p>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const form = e.currentTarget as HTMLFormElement;
          const data = new FormData(form);
          const text = (name: string) => (data.get(name) as string | null) ?? '';
          const email = text('email').trim();
          const key = text('privateKey').trim();
          setBusy(true);
          setError(undefined);
          try {
            if (!email && !key) throw new Error('Enter your email and password.');
            const s = email ? await signInMember(email, text('password'), text('code').trim() || undefined) : await signIn(key);
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
        {!withKeyOnly && (
          <>
            <label for="email">Email</label>
            <input ref={input} id="email" name="email" type="email" autocomplete="username" spellcheck={false} />
            <label for="password">Password</label>
            <input id="password" name="password" type="password" autocomplete="current-password" />
            {needsCode && (
              <>
                <label for="code">Authentication code</label>
                <input ref={codeInput} id="code" name="code" inputMode="numeric" autocomplete="one-time-code" spellcheck={false} aria-describedby="code-help" />
                <p class="muted" id="code-help">
                  The six-digit code of your authenticator app, or one of your recovery codes.
                </p>
              </>
            )}
            <p class="muted">Or, for a merchant without a team yet, its private key:</p>
          </>
        )}
        <label for="privateKey">Private key</label>
        <input
          ref={withKeyOnly ? input : undefined}
          id="privateKey"
          name="privateKey"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required={withKeyOnly}
          placeholder={props.environment === 'live' ? 'PGW-SECRETKEY-LIVE-…' : 'PGW-SECRETKEY-TEST-…'}
          aria-describedby={error ? 'signin-error' : undefined}
        />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Sign in
          </button>
          {props.onCancel && (
            <button type="button" class="secondary" onClick={props.onCancel}>
              Cancel
            </button>
          )}
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

function EnvironmentSwitch(props: { environment: Environment; onSwitch: (env: Environment) => void }) {
  return (
    <div class="env-switch" role="group" aria-label="Environment">
      {(['test', 'live'] as const).map((env) => (
        <button type="button" class={`env env-${env}`} aria-pressed={props.environment === env} onClick={() => props.onSwitch(env)}>
          {env === 'test' ? 'Test' : 'Live'}
        </button>
      ))}
    </div>
  );
}

function App() {
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [environment, setEnv] = useState<Environment>(currentEnvironment());
  const [asking, setAsking] = useState<Environment | null>(null);
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

  if (session === undefined) return <p class="loading">Loading…</p>;
  const signedIn = (s: Session) => {
    setSession({ ...s });
    setEnv(currentEnvironment());
    setAsking(null);
  };
  if (!session) return <SignIn onSignedIn={signedIn} />;

  const switchTo = (env: Environment) => {
    if (env === environment) return;
    if (!currentSession()?.environments.includes(env)) return setAsking(env);
    setEnvironment(env);
    setEnv(env);
  };

  const nav: [string, string][] = [
    ['/dashboard', 'Overview'],
    ['/dashboard/orders', 'Orders'],
    ['/dashboard/links', 'Payment links'],
    ['/dashboard/developers', 'Developers'],
    ['/dashboard/audit', 'Audit log'],
    // A member's own account; a key-opened session belongs to nobody.
    ...(session.member ? ([['/dashboard/security', 'Security']] as [string, string][]) : []),
  ];
  const section = path.startsWith('/dashboard/orders') ? '/dashboard/orders' : path.startsWith('/dashboard/links') ? '/dashboard/links' : path;

  let page;
  let m: RegExpExecArray | null;
  if (path === '/dashboard') page = <Overview />;
  else if (path === '/dashboard/orders') page = <Orders />;
  else if ((m = /^\/dashboard\/orders\/(.+)$/.exec(path))) page = <OrderPage reference={decodeURIComponent(m[1]!)} />;
  else if (path === '/dashboard/links') page = <PaymentLinks />;
  else if (path === '/dashboard/links/new') page = <LinkEditor />;
  else if ((m = /^\/dashboard\/links\/(\d+)$/.exec(path))) page = <LinkEditor id={Number(m[1])} />;
  else if (path === '/dashboard/developers') page = <Developers />;
  else if (path === '/dashboard/audit') page = <AuditLog />;
  else if (path === '/dashboard/security' && session.member) page = <Security />;
  else page = <p>Page not found.</p>;

  return (
    <div class={`shell env-${environment}-shell`}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <div class="brand">
          <strong>{session.merchantName}</strong>
          {session.member && (
            <span class="muted" data-member-role={session.member.role}>
              {session.member.email} ({session.member.role.toLowerCase()})
            </span>
          )}
          <span class={`env-badge env-${environment}`} aria-live="polite">
            {environment === 'live' ? 'Live data' : 'Test data'}
          </span>
        </div>
        <EnvironmentSwitch environment={environment} onSwitch={switchTo} />
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
      {asking ? (
        <SignIn environment={asking} onSignedIn={signedIn} onCancel={() => setAsking(null)} />
      ) : (
        <main id="main" key={environment}>
          {page}
        </main>
      )}
    </div>
  );
}

render(<App />, document.getElementById('app')!);
