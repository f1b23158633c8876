import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { WebhookEvent } from './types';

export { WebhookVerificationError };

/** Headers as Node (`req.headers`), fetch (`Headers`) or a plain object give them. */
export type WebhookHeaders = { get(name: string): string | null } | Record<string, string | string[] | undefined>;

/**
 * Verifies a webhook per Standard Webhooks (with the `standardwebhooks` package) and answers
 * the parsed event. `rawBody` must be the exact bytes received, before any JSON parsing;
 * `secret` is the `whsec_…` signing secret of the environment the receiver serves: each
 * environment has its own (`webhookSecret` for test, `liveWebhookSecret` for live), so a test
 * webhook never verifies with the live secret. With `options.livemode`, an event of the other
 * environment is refused too. Throws `WebhookVerificationError` for a missing header, a bad
 * signature, a timestamp more than five minutes off or an event of the wrong environment.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: WebhookHeaders, secret: string, options: { livemode?: boolean } = {}): WebhookEvent {
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8', { fatal: true }).decode(rawBody);
  const wanted = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;
  const normalized: Record<string, string> = {};
  for (const name of wanted) {
    const value = readHeader(headers, name);
    if (value !== undefined) normalized[name] = value;
  }
  const event = new Webhook(secret).verify(body, normalized) as WebhookEvent;
  if (options.livemode !== undefined && event.livemode !== options.livemode) {
    throw new WebhookVerificationError(`Expected a ${options.livemode ? 'live' : 'test'} webhook, got a ${event.livemode ? 'live' : 'test'} one`);
  }
  return event;
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
