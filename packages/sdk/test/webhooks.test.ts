import { createHmac, randomBytes } from 'node:crypto';
import { verifyWebhook, WebhookVerificationError } from '../src';

const secret = `whsec_${randomBytes(24).toString('base64')}`;

/** Signs as the service does, written here independently: HMAC-SHA256 over "<id>.<ts>.<body>". */
function sign(body: string, id = 'evt_1', timestamp = Math.floor(Date.now() / 1000)) {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` };
}

const body = JSON.stringify({
  notify: 'transaction',
  notifyType: 'successful',
  eventId: 'evt_1',
  livemode: false,
  sequence: 2,
  data: { orderReference: 'ORD-1' },
  status: 'success',
  statusCode: '00',
  message: 'Order details fetched successfully',
});

describe('SDK verifyWebhook', () => {
  it('accepts a signed body with Node, fetch or mixed-case headers and answers the parsed event', () => {
    const headers = sign(body);
    expect(verifyWebhook(body, headers, secret).data.orderReference).toBe('ORD-1');
    expect(verifyWebhook(new TextEncoder().encode(body), new Headers(headers), secret).eventId).toBe('evt_1');
    const mixed = {
      'Webhook-Id': headers['webhook-id'],
      'WEBHOOK-TIMESTAMP': headers['webhook-timestamp'],
      'webhook-signature': [`v1,AAAA`, headers['webhook-signature']],
    };
    expect(verifyWebhook(body, mixed, secret).notify).toBe('transaction');
  });

  it('refuses a changed body, a wrong secret, a missing header and an old timestamp', () => {
    const headers = sign(body);
    expect(() => verifyWebhook(body.replace('ORD-1', 'ORD-2'), headers, secret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, headers, `whsec_${randomBytes(24).toString('base64')}`)).toThrow(WebhookVerificationError);
    const { 'webhook-signature': _omitted, ...unsigned } = headers;
    expect(() => verifyWebhook(body, unsigned, secret)).toThrow(WebhookVerificationError);
    expect(() => verifyWebhook(body, sign(body, 'evt_1', Math.floor(Date.now() / 1000) - 3600), secret)).toThrow(WebhookVerificationError);
  });

  it('with the environment expected, refuses an event of the other one', () => {
    const headers = sign(body);
    expect(verifyWebhook(body, headers, secret, { livemode: false }).livemode).toBe(false);
    expect(() => verifyWebhook(body, headers, secret, { livemode: true })).toThrow(WebhookVerificationError);
  });
});
