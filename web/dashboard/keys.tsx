import { useState } from 'preact/hooks';
import { gql, may } from './api';
import { CopyButton, ErrorNote, messageOf, when } from './ui';

/** Routine rotation lets clients move over for a day; a leaked key must stop at once. */
const GRACE = { routine: 24 * 60 * 60, now: 0 } as const;
type Grace = keyof typeof GRACE;

const KIND_NAMES: Record<string, string> = { PUBLIC: 'public key', PRIVATE: 'private key', ENCRYPTION: 'encryption key' };

function KeyTable(props: { keys: any[] }) {
  return (
    <table class="compact">
      <thead>
        <tr>
          <th scope="col">Key</th>
          <th scope="col">Created</th>
          <th scope="col">Stops working</th>
        </tr>
      </thead>
      <tbody>
        {props.keys.map((k) => (
          <tr>
            <td class="mono">{k.hint}</td>
            <td>{when(k.createdAt)}</td>
            <td>{k.expiresAt ? when(k.expiresAt) : 'never (current)'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function NewKey(props: { label: string; value: string }) {
  return (
    <>
      <dt>{props.label}</dt>
      <dd>
        <code class="secret" data-key-kind={props.label}>
          {props.value}
        </code>{' '}
        <CopyButton text={props.value} label={`Copy ${props.label.toLowerCase()}`} />
      </dd>
    </>
  );
}

/** The new keys, once: private and public apart, each with a copy button, until the merchant says they are saved. */
function RotatedKeys(props: { rotated: any; onDone: () => void }) {
  const r = props.rotated;
  return (
    <div class="panel saved" role="status" aria-labelledby="new-keys-heading">
      <h3 id="new-keys-heading">Your new keys</h3>
      <p class="warning" role="alert">
        Copy them now: they are shown only this once and cannot be shown again. The replaced keys stop working{' '}
        {new Date(r.previousKeysExpireAt).getTime() <= Date.now() + 1000 ? 'now' : `at ${when(r.previousKeysExpireAt)}`}.
      </p>
      {r.privateKey && (
        <section class="key-group" data-key-group="private">
          <h4>Private key: for your server only, never in a web page or app</h4>
          <dl class="details">
            <NewKey label="Private key" value={r.privateKey} />
          </dl>
        </section>
      )}
      {(r.publicKey || r.encryptionKey) && (
        <section class="key-group" data-key-group="public">
          <h4>Public keys: safe in your web page or app</h4>
          <dl class="details">
            {r.publicKey && <NewKey label="Public key" value={r.publicKey} />}
            {r.encryptionKey && <NewKey label="Encryption key" value={r.encryptionKey} />}
          </dl>
        </section>
      )}
      <div class="actions">
        <button type="button" onClick={props.onDone}>
          I have saved these keys
        </button>
      </div>
    </div>
  );
}

export function Keys(props: { keys: any[]; onRotated: () => void }) {
  const [error, setError] = useState<string>();
  const [rotated, setRotated] = useState<any>(null);
  const [busy, setBusy] = useState(false);
  const [pending, setPending] = useState<{ keys: string[]; grace: Grace } | null>(null);

  const rotate = async (keys: string[], grace: Grace) => {
    setError(undefined);
    setBusy(true);
    try {
      const r = await gql(
        `mutation Rotate($input: RotateKeysInput!) { rotateKeys(input: $input) { publicKey privateKey encryptionKey previousKeysExpireAt } }`,
        { input: { keys, graceSeconds: GRACE[grace] } },
      );
      setPending(null);
      setRotated(r.rotateKeys);
      props.onRotated();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  const privateKeys = props.keys.filter((k) => String(k.kind).toUpperCase() === 'PRIVATE');
  const publicKeys = props.keys.filter((k) => String(k.kind).toUpperCase() !== 'PRIVATE');
  return (
    <section class="panel" aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      <section class="key-group" data-key-group="private">
        <h3>Private key</h3>
        <p class="muted">For your server only: it can create links, refund and read every order.</p>
        <KeyTable keys={privateKeys} />
      </section>
      <section class="key-group" data-key-group="public">
        <h3>Public key</h3>
        <p class="muted">Safe in your web page or app: it can start and pay orders only.</p>
        <KeyTable keys={publicKeys} />
      </section>
      <form
        class="rotate"
        onSubmit={(e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget as HTMLFormElement);
          const keys = data.getAll('keys') as string[];
          setError(undefined);
          if (keys.length === 0) return setError('Choose the keys to rotate.');
          setPending({ keys, grace: data.get('grace') === 'now' ? 'now' : 'routine' });
        }}
      >
        <fieldset>
          <legend>Rotate keys</legend>
          {/* The private key is a secret of the merchant: only a role allowed secrets rotates it. */}
          {may('secrets') && (
            <label class="choice">
              <input type="checkbox" name="keys" value="PRIVATE" /> Private key
            </label>
          )}
          <label class="choice">
            <input type="checkbox" name="keys" value="PUBLIC" /> Public key
          </label>
          <label class="choice">
            <input type="checkbox" name="keys" value="ENCRYPTION" /> Encryption key
          </label>
        </fieldset>
        <fieldset>
          <legend>When the old keys stop working</legend>
          <label class="choice">
            <input type="radio" name="grace" value="routine" defaultChecked /> In 24 hours (routine rotation: time to update your systems)
          </label>
          <label class="choice">
            <input type="radio" name="grace" value="now" /> Now (a key was leaked)
          </label>
        </fieldset>
        <div class="actions">
          <button type="submit" disabled={busy || pending !== null}>
            Rotate selected keys…
          </button>
        </div>
        {pending && (
          <div class="panel confirm" role="alertdialog" aria-labelledby="confirm-rotate-heading" aria-describedby="confirm-rotate-text">
            <h3 id="confirm-rotate-heading">Rotate the {pending.keys.map((k) => KIND_NAMES[k]).join(', ')}?</h3>
            <p id="confirm-rotate-text">
              New keys are made and shown once.{' '}
              {pending.grace === 'now'
                ? 'The old keys stop working immediately: every client still using them fails until it has the new ones.'
                : 'The old keys keep working for 24 hours, then stop: update your systems before then.'}
            </p>
            <div class="actions">
              <button type="button" disabled={busy} onClick={() => rotate(pending.keys, pending.grace)}>
                Yes, rotate
              </button>
              <button type="button" class="secondary" disabled={busy} onClick={() => setPending(null)}>
                Cancel
              </button>
            </div>
          </div>
        )}
        <ErrorNote error={error} />
      </form>
      {rotated && <RotatedKeys rotated={rotated} onDone={() => setRotated(null)} />}
    </section>
  );
}
