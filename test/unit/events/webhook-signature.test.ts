import { signWebhook, verifyWebhook, webhookSignatureHeaders } from '../../../src/events/webhook-signature';

describe('Standard Webhooks signature', () => {
  // The published example of the Standard Webhooks specification.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const id = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
  const body = '{"test": 2432232314}';

  it('matches the specification example', () => {
    expect(signWebhook(secret, id, 1614265330, body)).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(webhookSignatureHeaders(secret, id, 1614265330, body)).toEqual({
      'webhook-id': id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('verifies over the raw body, any of several signatures, within the tolerance', () => {
    const signature = signWebhook(secret, id, 1614265330, body);
    const headers = { id, timestamp: '1614265330', signature: `v1,bm9wZQ== ${signature}` };
    expect(verifyWebhook(secret, headers, body, { nowSeconds: 1614265330 })).toBe(true);
    expect(verifyWebhook(secret, headers, '{"test":2432232314}', { nowSeconds: 1614265330 })).toBe(false);
    expect(verifyWebhook(secret, { ...headers, id: 'msg_other' }, body, { nowSeconds: 1614265330 })).toBe(false);
    expect(verifyWebhook(secret, headers, body, { nowSeconds: 1614265330 + 301 })).toBe(false);
    expect(verifyWebhook('whsec_' + Buffer.alloc(24, 1).toString('base64'), headers, body, { nowSeconds: 1614265330 })).toBe(false);
  });
});
