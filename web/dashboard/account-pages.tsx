import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { gql } from './api';
import { Link, messageOf, navigate } from './ui';

/**
 * The pages a person reaches without being signed in: accepting an invitation
 * (`/dashboard/invitations/<token>`), choosing a new password (`/dashboard/reset/<token>`) and
 * asking for a reset link (`/dashboard/forgot-password`). Each calls one GraphQL mutation that
 * needs no key, then leads to the sign-in form.
 */
export function accountPage(path: string): ComponentChildren | undefined {
  let m: RegExpExecArray | null;
  if ((m = /^\/dashboard\/invitations\/([^/]+)$/.exec(path))) return <InvitationPage token={decodeURIComponent(m[1]!)} />;
  if ((m = /^\/dashboard\/reset\/([^/]+)$/.exec(path))) return <ResetPasswordPage token={decodeURIComponent(m[1]!)} />;
  if (path === '/dashboard/forgot-password') return <ForgotPasswordPage />;
  return undefined;
}

/** Where a form of these pages leads once done: the sign-in form, with the email filled in. */
function toSignIn(email: string): void {
  navigate(`/dashboard?email=${encodeURIComponent(email)}`);
}

function PasswordForm(props: { title: string; intro: string; label: string; button: string; submit: (password: string) => Promise<void> }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => input.current?.focus(), []);
  return (
    <main class="signin" id="main">
      <h1>{props.title}</h1>
      <p>{props.intro}</p>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const password = (new FormData(e.currentTarget as HTMLFormElement).get('password') as string | null) ?? '';
          setBusy(true);
          setError(undefined);
          try {
            await props.submit(password);
          } catch (err) {
            setError(messageOf(err));
            input.current?.focus();
          } finally {
            setBusy(false);
          }
        }}
      >
        <label for="password">{props.label}</label>
        <input
          ref={input}
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          minLength={12}
          required
          aria-describedby={error ? 'password-error' : 'password-hint'}
        />
        <p class="muted" id="password-hint">
          At least 12 characters.
        </p>
        <div class="actions">
          <button type="submit" disabled={busy}>
            {props.button}
          </button>
        </div>
        {error && (
          <p class="error" role="alert" id="password-error">
            {error}
          </p>
        )}
      </form>
      <p>
        <Link href="/dashboard">Back to sign-in</Link>
      </p>
    </main>
  );
}

function InvitationPage(props: { token: string }) {
  return (
    <PasswordForm
      title="Join the team"
      intro="You were invited to a merchant's dashboard. Choose your password to accept the invitation; you then sign in with your email and this password."
      label="Password"
      button="Accept invitation"
      submit={async (password) => {
        const data = await gql<{ acceptInvitation: { email: string } }>(
          `mutation ($input: AcceptInvitationInput!) { acceptInvitation(input: $input) { email } }`,
          { input: { token: props.token, password } },
        );
        toSignIn(data.acceptInvitation.email);
      }}
    />
  );
}

function ResetPasswordPage(props: { token: string }) {
  return (
    <PasswordForm
      title="Choose a new password"
      intro="Choose the new password of your account. Every session signed in with the old one ends."
      label="New password"
      button="Set new password"
      submit={async (password) => {
        const data = await gql<{ resetPassword: { email: string } }>(`mutation ($input: ResetPasswordInput!) { resetPassword(input: $input) { email } }`, {
          input: { token: props.token, password },
        });
        toSignIn(data.resetPassword.email);
      }}
    />
  );
}

function ForgotPasswordPage() {
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  return (
    <main class="signin" id="main">
      <h1>Forgot password</h1>
      {sent ? (
        <p role="status">If this email belongs to a member, a link to choose a new password is on its way. It works once, within an hour.</p>
      ) : (
        <form
          onSubmit={async (e) => {
            e.preventDefault();
            const email = ((new FormData(e.currentTarget as HTMLFormElement).get('email') as string | null) ?? '').trim();
            setBusy(true);
            setError(undefined);
            try {
              await gql(`mutation ($email: String!) { requestPasswordReset(email: $email) }`, { email });
              setSent(true);
            } catch (err) {
              setError(messageOf(err));
            } finally {
              setBusy(false);
            }
          }}
        >
          <p>Enter the email you sign in with: we send it a link to choose a new password. Without email, ask an owner or admin of your team for a link.</p>
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required spellcheck={false} />
          <div class="actions">
            <button type="submit" disabled={busy}>
              Send reset link
            </button>
          </div>
          {error && (
            <p class="error" role="alert">
              {error}
            </p>
          )}
        </form>
      )}
      <p>
        <Link href="/dashboard">Back to sign-in</Link>
      </p>
    </main>
  );
}
