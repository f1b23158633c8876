import { useState } from 'preact/hooks';
import { currentEnvironment, gql, may } from './api';
import { Keys } from './keys';
import { DELIVERIES, DeliveryLog } from './orders';
import { CopyButton, ErrorNote, followUp, messageOf, useData, when } from './ui';

const SETTINGS = `query Developer {
  merchant { environment encryptionKey subsidiary { name supportEmail } }
  apiKeys { kind hint createdAt expiresAt }
  webhookSettings { webhookUrl }
}`;

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
      {may('secrets') && <SigningSecret />}
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
