import { useState } from 'preact/hooks';
import { currentEnvironment, gql, signIn } from './api';
import { DELIVERIES, DeliveryLog, followUp } from './orders';
import { CopyButton, ErrorNote, messageOf, useData, when } from './ui';

const SETTINGS = `query Developer {
  merchant { environment encryptionKey subsidiary { name supportEmail } }
  apiKeys { kind hint createdAt expiresAt }
  webhookSettings { webhookUrl }
}`;

function Keys(props: { keys: any[]; onRotated: () => void }) {
  const [error, setError] = useState<string>();
  const [rotated, setRotated] = useState<any>(null);
  const [busy, setBusy] = useState(false);
  return (
    <section class="panel" aria-labelledby="keys-heading">
      <h2 id="keys-heading">API keys</h2>
      <table class="compact">
        <thead>
          <tr>
            <th scope="col">Kind</th>
            <th scope="col">Key</th>
            <th scope="col">Created</th>
            <th scope="col">Stops working</th>
          </tr>
        </thead>
        <tbody>
          {props.keys.map((k) => (
            <tr>
              <td>{k.kind}</td>
              <td class="mono">{k.hint}</td>
              <td>{when(k.createdAt)}</td>
              <td>{k.expiresAt ? when(k.expiresAt) : 'never (current)'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <form
        class="rotate"
        onSubmit={async (e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget as HTMLFormElement);
          const keys = data.getAll('keys') as string[];
          const graceSeconds = Math.round(Number(data.get('graceMinutes') || 0) * 60);
          setError(undefined);
          setBusy(true);
          try {
            const r = await gql(
              `mutation Rotate($input: RotateKeysInput!) { rotateKeys(input: $input) { publicKey privateKey encryptionKey previousKeysExpireAt } }`,
              { input: { keys, graceSeconds } },
            );
            setRotated(r.rotateKeys);
            // The session was opened with the old private key: go on with the new one (kept in memory only).
            if (r.rotateKeys.privateKey) await signIn(r.rotateKeys.privateKey);
            props.onRotated();
          } catch (err) {
            setError(messageOf(err));
          } finally {
            setBusy(false);
          }
        }}
      >
        <fieldset>
          <legend>Rotate keys</legend>
          <label class="choice">
            <input type="checkbox" name="keys" value="PUBLIC" /> Public key
          </label>
          <label class="choice">
            <input type="checkbox" name="keys" value="PRIVATE" /> Private key
          </label>
          <label class="choice">
            <input type="checkbox" name="keys" value="ENCRYPTION" /> Encryption key
          </label>
        </fieldset>
        <div class="field">
          <label for="grace">Grace period in minutes (old keys keep working this long)</label>
          <input id="grace" name="graceMinutes" type="number" min={0} max={10080} step={1} defaultValue="0" />
        </div>
        <div class="actions">
          <button type="submit" disabled={busy}>
            Rotate selected keys
          </button>
        </div>
        <ErrorNote error={error} />
      </form>
      {rotated && (
        <div class="panel saved" role="status">
          <h3>New keys: copy them now, they are shown only once</h3>
          <p>The replaced keys stop working at {when(rotated.previousKeysExpireAt)}.</p>
          <dl class="details">
            {(
              [
                ['Public key', rotated.publicKey],
                ['Private key', rotated.privateKey],
                ['Encryption key', rotated.encryptionKey],
              ] as const
            )
              .filter(([, v]) => v)
              .map(([label, value]) => (
                <>
                  <dt>{label}</dt>
                  <dd>
                    <code class="secret" data-key-kind={label}>
                      {value}
                    </code>{' '}
                    <CopyButton text={value!} label={`Copy ${label.toLowerCase()}`} />
                  </dd>
                </>
              ))}
          </dl>
        </div>
      )}
    </section>
  );
}

function Webhooks(props: { url: string | null; onChange: () => void }) {
  const [error, setError] = useState<string>();
  const [note, setNote] = useState<string>();
  const log = useData(() => gql(DELIVERIES, { limit: 25 }), []);
  return (
    <section class="panel" aria-labelledby="webhooks-heading">
      <h2 id="webhooks-heading">Webhooks</h2>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const url = String(new FormData(e.currentTarget as HTMLFormElement).get('url') ?? '').trim();
          setError(undefined);
          setNote(undefined);
          try {
            await gql(`mutation SetUrl($url: String) { setWebhookUrl(url: $url) { webhookUrl } }`, { url: url || null });
            setNote(url ? 'Webhook URL saved.' : 'Webhook URL removed.');
            props.onChange();
          } catch (err) {
            setError(messageOf(err));
          }
        }}
      >
        <div class="field">
          <label for="webhook-url">Webhook URL</label>
          <input id="webhook-url" name="url" type="url" defaultValue={props.url ?? ''} placeholder="https://example.com/hooks" />
        </div>
        <div class="actions">
          <button type="submit">Save webhook URL</button>
          <button
            type="button"
            class="secondary"
            onClick={async () => {
              setError(undefined);
              setNote(undefined);
              try {
                await gql(`mutation Ping { sendTestWebhook { id } }`);
                setNote('Test ping queued.');
                followUp(log.reload);
              } catch (err) {
                setError(messageOf(err));
              }
            }}
          >
            Send test ping
          </button>
        </div>
        <ErrorNote error={error} />
        {note && <p role="status">{note}</p>}
      </form>
      <SigningSecret />
      <h3>Delivery log</h3>
      <button type="button" class="secondary" onClick={log.reload}>
        Refresh log
      </button>
      <ErrorNote error={log.error} />
      {log.data && <DeliveryLog deliveries={log.data.webhookDeliveries} onChange={log.reload} />}
    </section>
  );
}

/** Signing-secret rotation; during the overlap deliveries are signed with both secrets. */
function SigningSecret() {
  const [error, setError] = useState<string>();
  const [rotated, setRotated] = useState<{ webhookSecret: string; previousSecretExpiresAt: string } | null>(null);
  return (
    <form
      class="rotate"
      aria-labelledby="signing-secret-heading"
      onSubmit={async (e) => {
        e.preventDefault();
        const minutes = Number(new FormData(e.currentTarget as HTMLFormElement).get('overlapMinutes') || 0);
        setError(undefined);
        try {
          const r = await gql(
            `mutation RotateSecret($overlap: Int) { rotateWebhookSecret(overlapSeconds: $overlap) { webhookSecret previousSecretExpiresAt } }`,
            {
              overlap: Math.round(minutes * 60),
            },
          );
          setRotated(r.rotateWebhookSecret);
        } catch (err) {
          setError(messageOf(err));
        }
      }}
    >
      <h3 id="signing-secret-heading">Signing secret</h3>
      <p class="muted">
        Each environment signs its webhooks with its own secret; this rotates the {currentEnvironment() === 'live' ? 'Live' : 'Test'} environment's. During the
        overlap each webhook carries a signature under the old and the new secret.
      </p>
      <div class="field">
        <label for="overlap">Overlap in minutes</label>
        <input id="overlap" name="overlapMinutes" type="number" min={0} max={10080} step={1} defaultValue="60" />
      </div>
      <div class="actions">
        <button type="submit">Rotate signing secret</button>
      </div>
      <ErrorNote error={error} />
      {rotated && (
        <div class="panel saved" role="status">
          <p>New signing secret (shown once); the old one stops signing at {when(rotated.previousSecretExpiresAt)}:</p>
          <code class="secret">{rotated.webhookSecret}</code> <CopyButton text={rotated.webhookSecret} label="Copy signing secret" />
        </div>
      )}
    </form>
  );
}

/** Keys, webhook settings and log, the encryption key. */
export function Developers() {
  const settings = useData(() => gql(SETTINGS), []);
  if (settings.error) return <ErrorNote error={settings.error} />;
  if (!settings.data) return <p>Loading…</p>;
  const { merchant, apiKeys, webhookSettings } = settings.data;
  return (
    <>
      <h1>Developers</h1>
      <p>
        Keys and webhooks of the <strong>{currentEnvironment()}</strong> environment.
      </p>
      <Keys keys={apiKeys} onRotated={settings.reload} />
      <section class="panel" aria-labelledby="enc-heading">
        <h2 id="enc-heading">Encryption key</h2>
        <p>Encrypt the payloads of the encrypted endpoints with this key.</p>
        <textarea class="mono key-text" readOnly rows={4} aria-label="Encryption key" value={merchant.encryptionKey} />
        <div class="actions">
          <CopyButton text={merchant.encryptionKey} label="Copy encryption key" />
        </div>
      </section>
      <Webhooks url={webhookSettings.webhookUrl} onChange={settings.reload} />
    </>
  );
}
