import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { WebhookEvent } from './types';

export { WebhookVerificationError };

/** Headers as Node (`req.headers`), fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

/**
 * Verifies a webhook per Standard Webhooks (with the `standardwebhooks` package) and answers
 * the parsed event. `rawBody` must be the exact bytes received, before any JSON parsing;
 * `secret` is the merchant's `whsec_…` webhook secret. Throws `WebhookVerificationError` for
 * a missing header, a bad signature or a timestamp more than five minutes off.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string): WebhookEvent {
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
  const wanted = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
  const normalized: Record<string, string> = {};
  for (const name of wanted) {
    const value = readHeader(headers, name);
    if (value !== undefined) normalized[name] = value;
  }
  return new Webhook(secret).verify(body, normalized) as WebhookEvent;
}

function readHeader(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  }
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(' ') : value;
}
