import { Writable } from 'node:stream';
import { startTestService, type TestService } from '../../support/service';
import { graphql, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { createScratchDatabase } from '../../support/scratch-database';
import { payOrder, startReceiver, type Receiver } from '../events/helpers';
import { loggerOptions } from '../../../src/app';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const APPROVED_CARD = '5123450000000008';
const DECLINED_CARD = '4000000000000002';

/**
 * The service's log at info, as `npm start` writes it: one line per business event naming the
 * order by reference, one `request completed` line per request with its method, matched route
 * and status, nothing at info for health checks and static files, and no secret or card number.
 */
describe('business events and request lines in the log', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let t: TestService;
  let m: CreatedMerchant;
  let receiver: Receiver;
  let paid = '';
  let declined = '';
  let paidFailedOnce = false;
  const raw: string[] = [];
  const lines = () =>
    raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);

  beforeAll(async () => {
    scratch = await createScratchDatabase('business_log');
    // The declined order's webhook always fails (retried once, then dead); the approved one's fails once, then is delivered.
    receiver = await startReceiver((received) => {
      if (received.body.includes(declined)) return { status: 500 };
      if (received.body.includes(paid) && !paidFailedOnce) {
        paidFailedOnce = true;
        return { status: 500 };
      }
      return { status: 200 };
    });
    const stream = new Writable({
      write(chunk, _enc, done) {
        raw.push(chunk.toString());
        done();
      },
    });
    t = await startTestService(
      { DATABASE_URL: scratch.url, RATE_LIMIT: 'off', WEBHOOK_RETRY_DELAYS_MS: '0', WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' },
      { logger: { ...(loggerOptions('info') as object), stream } },
    );
    m = await createTestMerchant(t, { webhookUrl: receiver.url });
  }, 90_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await scratch?.drop();
  });

  it('writes one info line per business event with the order reference, and none with a key or card number', async () => {
    const k = m.keys.test;
    // References without long digit runs: the log masks any run that could be a card number.
    const tag = Math.random().toString(36).slice(2, 8).toUpperCase();
    paid = await payOrder(t.baseUrl, k, APPROVED_CARD, `LOG-PAID-${tag}`);
    declined = await payOrder(t.baseUrl, k, DECLINED_CARD, `LOG-DECLINED-${tag}`);
    await t.service.runtime.ctx.services.webhooks.runOnce();
    const rotated = await graphql(t.baseUrl, 'mutation { rotateKeys(input: { keys: [PUBLIC] }) { publicKey } }', {}, { 'api-key': k.privateKey });
    expect(rotated.body.errors).toBeUndefined();

    const events = lines()
      .filter((l) => l.event !== undefined)
      .map(({ level, msg, event, reference, code, attempt, statusCode, environment, kinds }) => ({
        level,
        msg,
        event,
        reference,
        code,
        attempt,
        statusCode,
        environment,
        kinds,
      }));
    const e = (fields: Record<string, unknown>) => ({ level: 30, ...fields });
    const ofOrder = (reference: string) => events.filter((l) => l.reference === reference);
    expect(ofOrder(paid)).toEqual([
      e({ msg: 'order created', event: 'order.created', reference: paid }),
      e({ msg: 'payment settled', event: 'payment.settled', reference: paid, code: '00' }),
      e({ msg: 'webhook retried', event: 'webhook.retry', reference: paid, attempt: 1, statusCode: 500 }),
      e({ msg: 'webhook delivered', event: 'webhook.delivered', reference: paid, attempt: 2, statusCode: 200 }),
    ]);
    expect(ofOrder(declined)).toEqual([
      e({ msg: 'order created', event: 'order.created', reference: declined }),
      e({ msg: 'payment failed', event: 'payment.failed', reference: declined, code: '51' }),
      e({ msg: 'webhook retried', event: 'webhook.retry', reference: declined, attempt: 1, statusCode: 500 }),
      e({ msg: 'webhook dead', event: 'webhook.dead', reference: declined, attempt: 2, statusCode: 500 }),
    ]);
    expect(events.filter((l) => l.event === 'keys.rotated')).toEqual([
      e({ msg: 'keys rotated', event: 'keys.rotated', environment: 'test', kinds: ['public'] }),
    ]);

    const text = raw.join('');
    for (const secret of [
      APPROVED_CARD,
      DECLINED_CARD,
      '5123 4500 0000 0008',
      k.privateKey,
      k.publicKey,
      rotated.body.data.rotateKeys.publicKey,
      m.webhookSecret,
    ]) {
      expect(text).not.toContain(secret);
    }
  }, 60_000);

  it('ends every request with a line carrying its method, matched route pattern and status', async () => {
    const res = await request(t.baseUrl, 'POST', '/checkout/order/verify', {
      apiKey: m.keys.test.privateKey,
      body: { reference: 'NO-SUCH-ORDER' },
      headers: { 'x-request-id': 'route-line-1' },
    });
    const mine = lines().filter((l) => l.reqId === 'route-line-1');
    expect(mine.map((l) => [l.level, l.msg])).toEqual([
      [30, 'incoming request'],
      [30, 'request completed'],
    ]);
    expect(mine[1]).toEqual(expect.objectContaining({ method: 'POST', route: '/checkout/order/verify', status: res.status }));

    await request(t.baseUrl, 'GET', '/pay/SOME-REF/result?status=successful', { headers: { 'x-request-id': 'route-line-2' } });
    expect(lines().find((l) => l.reqId === 'route-line-2' && l.msg === 'request completed')).toEqual(
      expect.objectContaining({ level: 30, method: 'GET', route: '/pay/:reference/result', status: expect.any(Number) }),
    );
  });

  it('logs nothing at info for health checks and static files', async () => {
    const quiet = ['/health', '/health/ready', '/health/live', '/favicon.ico', '/checkout-assets/checkout.css', '/assets/banks/058.svg'];
    for (const [i, path] of quiet.entries()) {
      const res = await request(t.baseUrl, 'GET', path, { headers: { 'x-request-id': `quiet-${i}` } });
      expect(res.status).toBeLessThan(400);
    }
    // A request after them: its line is written, so theirs would have been too.
    await request(t.baseUrl, 'GET', '/no/such/path', { headers: { 'x-request-id': 'loud-1' } });
    expect(lines().filter((l) => l.reqId === 'loud-1' && l.msg === 'request completed')).toEqual([
      expect.objectContaining({ level: 30, method: 'GET', route: null, status: 404 }),
    ]);
    expect(lines().filter((l) => String(l.reqId).startsWith('quiet-'))).toEqual([]);
  });
});
