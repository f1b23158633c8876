import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signing: `webhook-id`, `webhook-timestamp` (unix
 * seconds) and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">`,
 * keyed with the bytes of the merchant's `whsec_…` secret after the prefix, base64-decoded.
 */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export interface WebhookSignatureHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** The HMAC key of a `whsec_<base64>` secret. */
export function webhookSigningKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  const key = Buffer.from(encoded, 'base64');
  if (key.length === 0) throw new Error('The webhook secret is empty.');
  return key;
}

/** `v1,<base64 signature>` over `<id>.<timestamp>.<body>`. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', webhookSigningKey(secret)).update(`${id}.${timestampSeconds}.${body}`, 'utf8').digest('base64');
  return `v1,${mac}`;
}

export function webhookSignatureHeaders(secret: string, id: string, timestampSeconds: number, body: string): WebhookSignatureHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signWebhook(secret, id, timestampSeconds, body),
  };
}

/**
 * Verifies a delivery the way a receiver should: over the raw body, against every `v1,`
 * signature in the (space-separated) header, with a bounded clock tolerance.
 */
export function verifyWebhook(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  options: { nowSeconds?: number; toleranceSeconds?: number } = {},
): boolean {
  if (!/^\d{1,12}$/.test(headers.timestamp)) return false;
  const timestamp = Number(headers.timestamp);
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signWebhook(secret, headers.id, timestamp, body).slice(3), 'base64');
  return headers.signature.split(' ').some((candidate) => {
    if (!candidate.startsWith('v1,')) return false;
    const given = Buffer.from(candidate.slice(3), 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
