import http from 'node:http';
import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { postEncrypted } from '../../support/http';

/**
 * The webhook settings every events test uses (in-process services and spawned processes
 * alike), so whichever instance picks a delivery up treats it the same way.
 */
export const EVENTS_ENV = {
  WEBHOOK_CONCURRENCY: '8',
  WEBHOOK_RETRY_DELAYS_MS: '100,100',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_POLL_INTERVAL_MS: '200',
  // The receivers listen on loopback, which webhooks may reach only when exempted (local development).
  WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
};

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  /** The raw body, exactly as received. */
  body: string;
  json: any;
  at: number;
}

export type Reply = { status: number; body?: string; delayMs?: number } | 'hang';

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  /** Most requests in flight at once. */
  maxInflight: number;
  reply: (request: ReceivedWebhook, index: number) => Reply;
  waitForCount(count: number, ms?: number): Promise<ReceivedWebhook[]>;
  close(): Promise<void>;
}

/** A merchant's webhook receiver on loopback; answers as `reply` says (default 200). */
export async function startReceiver(reply: Receiver['reply'] = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  let inflight = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const received: ReceivedWebhook = { headers: req.headers, body, json, at: Date.now() };
      const index = receiver.received.push(received) - 1;
      inflight += 1;
      receiver.maxInflight = Math.max(receiver.maxInflight, inflight);
      const answer = receiver.reply(received, index);
      if (answer === 'hang') {
        res.on('close', () => (inflight -= 1));
        return;
      }
      setTimeout(() => {
        inflight -= 1;
        res.writeHead(answer.status, { 'content-type': 'text/plain' });
        res.end(answer.body ?? '');
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}/hooks`,
    received: [],
    maxInflight: 0,
    reply,
    async waitForCount(count, ms = 10_000) {
      await waitFor(() => receiver.received.length >= count, ms, `${count} webhook(s) at ${receiver.url} (got ${receiver.received.length})`);
      return receiver.received;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** Polls until `predicate` holds (bounded). */
export async function waitFor<T>(predicate: () => T | Promise<T>, ms = 10_000, what = 'condition'): Promise<Exclude<T, null | undefined | false>> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await predicate();
    if (value) return value as Exclude<T, null | undefined | false>;
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Standard Webhooks verification written independently of the service: HMAC-SHA256 over
 * "<webhook-id>.<webhook-timestamp>.<raw body>" with the base64-decoded part of `whsec_…`.
 */
export function verifiesIndependently(secret: string, headers: http.IncomingHttpHeaders, rawBody: string): boolean {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  const signed = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${rawBody}`;
  const expected = `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .includes(expected);
}

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
let counter = 0;

/**
 * Creates an order and pays it by card through 3-D Secure, as a customer would:
 * 5123450000000008 succeeds, 4000000000000002 fails (51).
 */
export async function payOrder(
  baseUrl: string,
  keys: { publicKey: string; encryptionKey: string },
  cardNumber = '5123450000000008',
  reference = `EVT-${process.pid}-${Date.now()}-${++counter}`,
): Promise<string> {
  const created = await postEncrypted(baseUrl, '/checkout/order/create', keys.publicKey, keys.encryptionKey, {
    customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada+${counter}@example.test` },
    order: { amount: 1000, reference, description: 'Order', currency: 'NGN' },
    payment: { RedirectUrl: 'https://merchant.test/return' },
  });
  if (created.body?.statusCode !== '01') throw new Error(`order/create failed: ${created.text}`);
  const paid = await postEncrypted(baseUrl, '/checkout/order/pay', keys.publicKey, keys.encryptionKey, {
    reference,
    paymentOption: 'C',
    country: 'NG',
    card: { cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
  });
  if (paid.body?.statusCode !== '02') throw new Error(`order/pay failed: ${paid.text}`);
  const answer = await fetch(paid.body.data.paymentDetail.redirectUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ otp: '123456' }).toString(),
  });
  if (answer.status !== 303) throw new Error(`3-D Secure answer: ${answer.status}`);
  return reference;
}

export { createScratchDatabase, freePort } from '../../support/scratch-database';
