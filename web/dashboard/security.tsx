import { useState } from 'preact/hooks';
import { gql } from './api';
import { CopyButton, ErrorNote, messageOf, useData } from './ui';

const ACCOUNT = `{ myAccount { email totpEnabled recoveryCodesLeft } }`;
const START = `mutation { startTotpEnrolment { secret otpauthUri qrCodeDataUrl } }`;
const CONFIRM = `mutation ($code: String!) { confirmTotpEnrolment(input: { code: $code }) { recoveryCodes } }`;
const DISABLE = `mutation ($input: DisableTotpInput!) { disableTotp(input: $input) }`;

interface Enrolment {
  secret: string;
  otpauthUri: string;
  qrCodeDataUrl: string;
}

/** The recovery codes, this once, until the member says they are saved. */
function RecoveryCodes(props: { codes: string[]; onDone: () => void }) {
  return (
    <div class="panel saved" role="status" aria-labelledby="recovery-heading">
      <h3 id="recovery-heading">Recovery codes</h3>
      <p class="warning" role="alert">
        Two-step sign-in is on. Save these codes somewhere safe now: they are shown only this once. Each one signs you in once, in place of a code, if you lose
        your authenticator app.
      </p>
      <ul class="recovery-codes mono" aria-label="Recovery codes">
        {props.codes.map((code) => (
          <li>{code}</li>
        ))}
      </ul>
      <div class="actions">
        <CopyButton text={props.codes.join('\n')} label="Copy recovery codes" />
        <button type="button" onClick={props.onDone}>
          I have saved them
        </button>
      </div>
    </div>
  );
}

/** Turning it on: the QR code and the secret, then the first code from the app. */
function Enrol(props: { onEnabled: (codes: string[]) => void; onCancel: () => void; enrolment: Enrolment }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const e = props.enrolment;
  return (
    <div class="panel" aria-labelledby="enrol-heading">
      <h3 id="enrol-heading">Scan this QR code with your authenticator app</h3>
      <img class="qr" src={e.qrCodeDataUrl} width={220} height={220} alt="QR code of your two-step sign-in secret" />
      <p>Or type this secret key into the app:</p>
      <p>
        <code class="secret" data-totp-secret>
          {e.secret}
        </code>{' '}
        <CopyButton text={e.secret} label="Copy secret key" />
      </p>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const code = String(new FormData(event.currentTarget as HTMLFormElement).get('code') ?? '');
          setBusy(true);
          setError(undefined);
          try {
            const confirmed = await gql(CONFIRM, { code });
            props.onEnabled(confirmed.confirmTotpEnrolment.recoveryCodes);
          } catch (err) {
            setError(messageOf(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <label for="enrol-code">Authentication code</label>
        <input id="enrol-code" name="code" inputMode="numeric" autocomplete="one-time-code" required />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Turn on
          </button>
          <button type="button" class="secondary" onClick={props.onCancel}>
            Cancel
          </button>
        </div>
        <ErrorNote error={error} />
      </form>
    </div>
  );
}

/** Turning it off: a current code, or the password. */
function Disable(props: { onDisabled: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  return (
    <form
      onSubmit={async (event) => {
        event.preventDefault();
        const data = new FormData(event.currentTarget as HTMLFormElement);
        const code = String(data.get('code') ?? '').trim();
        const password = String(data.get('password') ?? '');
        setBusy(true);
        setError(undefined);
        try {
          await gql(DISABLE, { input: code ? { code } : { password } });
          props.onDisabled();
        } catch (err) {
          setError(messageOf(err));
        } finally {
          setBusy(false);
        }
      }}
    >
      <p>To turn it off, give a current code from your app, or your password.</p>
      <label for="disable-code">Authentication code</label>
      <input id="disable-code" name="code" inputMode="numeric" autocomplete="one-time-code" />
      <label for="disable-password">Password</label>
      <input id="disable-password" name="password" type="password" autocomplete="current-password" />
      <div class="actions">
        <button type="submit" disabled={busy}>
          Turn off two-step sign-in
        </button>
      </div>
      <ErrorNote error={error} />
    </form>
  );
}

/** The signed-in member's own security settings: two-step sign-in with an authenticator app. */
export function Security() {
  const account = useData(() => gql(ACCOUNT), []);
  const [enrolment, setEnrolment] = useState<Enrolment>();
  const [codes, setCodes] = useState<string[]>();
  const [error, setError] = useState<string>();
  if (account.error) return <ErrorNote error={account.error} />;
  if (!account.data) return <p>Loading…</p>;
  const me = account.data.myAccount;
  return (
    <>
      <h1>Security</h1>
      <p>
        Signed in as <strong>{me.email}</strong>.
      </p>
      <section class="panel" aria-labelledby="totp-heading">
        <h2 id="totp-heading">Two-step sign-in</h2>
        {codes ? (
          <RecoveryCodes
            codes={codes}
            onDone={() => {
              setCodes(undefined);
              account.reload();
            }}
          />
        ) : me.totpEnabled ? (
          <>
            <p data-totp-state="on">
              Two-step sign-in is <strong>on</strong>: signing in asks for a code from your authenticator app after your password. {me.recoveryCodesLeft}{' '}
              recovery code{me.recoveryCodesLeft === 1 ? '' : 's'} left.
            </p>
            <Disable onDisabled={account.reload} />
          </>
        ) : enrolment ? (
          <Enrol
            enrolment={enrolment}
            onCancel={() => setEnrolment(undefined)}
            onEnabled={(recoveryCodes) => {
              setEnrolment(undefined);
              setCodes(recoveryCodes);
            }}
          />
        ) : (
          <>
            <p data-totp-state="off">
              Two-step sign-in is <strong>off</strong>. Turn it on to be asked, after your password, for a code from an authenticator app on your phone.
            </p>
            <div class="actions">
              <button
                type="button"
                onClick={async () => {
                  setError(undefined);
                  try {
                    setEnrolment((await gql(START)).startTotpEnrolment);
                  } catch (err) {
                    setError(messageOf(err));
                  }
                }}
              >
                Turn on two-step sign-in
              </button>
            </div>
            <ErrorNote error={error} />
          </>
        )}
      </section>
    </>
  );
}
