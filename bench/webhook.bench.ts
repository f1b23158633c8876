import 'reflect-metadata';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { EventEmitter } from 'node:events';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config';
import { createService, type Service } from '../src/bootstrap';
import { encryptPayload } from '../packages/sdk/src/encryption';
import { OrderStatusBus, type OrderStatusChange } from '../src/events/order-status-bus';
import { WebhookHttpClient } from '../src/events/webhook-http';
import type { Tenant } from '../src/merchants/tenant';
import { benchDatabaseEnv, freePort } from './bench-env';

const SEQUENTIAL_EVENTS = 300;
const BURST_EVENTS = 200;
const SUBSCRIBERS = 1000;
const PUBLISHES = 200;
const WAIT_MS = 10_000;
const FAIR_EVENTS = 50;

/** A local receiver answering 200 at once (or never, when `hang`); records when each webhook arrived, in order. */
async function startReceiver(hang = false): Promise<{ url: string; arrivals: number[]; waitCount(n: number): Promise<void>; close(): Promise<void> }> {
  const arrivals: number[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      arrivals.push(performance.now());
      if (hang) return;
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    async waitCount(n) {
      const deadline = Date.now() + WAIT_MS;
      while (arrivals.length < n) {
        if (Date.now() > deadline) throw new Error(`bench: ${arrivals.length}/${n} webhooks received within ${WAIT_MS} ms`);
        await new Promise((r) => setImmediate(r));
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * (sorted.length - 1)))]!;
}

const ms = (n: number) => `${n.toFixed(2)} ms`;
const us = (n: number) => `${Math.round(n * 1000).toLocaleString('en-US')} µs`;

/** One paid order through the REST shim and 3-D Secure: a realistic webhook body (the order details). */
async function paidOrderEvent(
  service: Service,
  baseUrl: string,
  keys: { publicKey: string; encryptionKey: string },
  tenant: Tenant,
): Promise<{ eventId: string; body: string }> {
  const post = (p: string, plaintext: object) =>
    fetch(`${baseUrl}${p}`, {
      method: 'POST',
      headers: { 'api-key': keys.publicKey, 'content-type': 'application/json' },
      body: JSON.stringify({ data: encryptPayload(plaintext, keys.encryptionKey) }),
    }).then((r) => r.json() as Promise<any>);
  const reference = `BENCH-${Date.now()}`;
  const created = await post('/checkout/order/create', {
    customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@bench.test' },
    order: { amount: 1000, reference, description: 'Bench', currency: 'NGN' },
    payment: { RedirectUrl: 'https://merchant.test/return' },
  });
  if (created.statusCode !== '01') throw new Error(`bench: order/create ${JSON.stringify(created)}`);
  const billingAddress = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
  const paid = await post('/checkout/order/pay', {
    reference,
    paymentOption: 'C',
    country: 'NG',
    card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress },
  });
  if (paid.statusCode !== '02') throw new Error(`bench: order/pay ${JSON.stringify(paid)}`);
  await fetch(paid.data.paymentDetail.redirectUrl, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'otp=123456',
  });
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const [delivery] = await service.runtime.ctx.services.webhooks.listDeliveries(tenant, { orderReference: reference });
    if (delivery?.state === 'delivered') {
      const rows: Array<{ body: string }> = await service.runtime.ctx.orm.em
        .getConnection()
        .execute('select payload::text as body from outbox_event where id = ?', [delivery.eventId]);
      return { eventId: delivery.eventId, body: rows[0]!.body };
    }
    if (Date.now() > deadline) throw new Error('bench: the order event was not delivered');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * (1) Webhook dispatch lag on this machine: from the commit of a pending delivery (a
 * redelivery of a real order event, ~2 KiB body) to its receipt at a local receiver, one at a
 * time and in a burst; baseline: the same signed-size POST straight to the receiver.
 * (2) In-process OrderStatusBus fan-out to 1,000 subscribers; baseline: node:events.
 * Embedded database unless BENCH_DATABASE_URL names a scratch PostgreSQL database (the
 * bench creates a merchant and events in it).
 */
export async function runWebhookBench(): Promise<{ name: string; lines: string[] }> {
  const lines: string[] = [];
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-'));
  const receiver = await startReceiver();
  let service: Service | undefined;
  try {
    const databaseUrl = process.env.BENCH_DATABASE_URL;
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const config = loadConfig({
      DATA_DIR: dataDir,
      ...benchDatabaseEnv(),
      PORT: String(port),
      PUBLIC_URL: baseUrl,
      LOG_LEVEL: 'silent',
      SCHEDULER_INTERVAL_MS: '0',
      WEBHOOK_TIMEOUT_MS: '10000',
      // The receiver is on loopback, which webhooks may not reach unless exempted.
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    });
    service = await createService(config, { logger: false });
    await service.app.listen({ port, host: '127.0.0.1' });
    const services = service.runtime.ctx.services;
    lines.push(
      databaseUrl
        ? `database: PostgreSQL server (BENCH_DATABASE_URL), fan-out by LISTEN/NOTIFY`
        : `database: embedded PGlite (one connection); set BENCH_DATABASE_URL=postgres://… (a scratch database) for a server`,
    );

    const merchant = await services.merchants.createMerchant({ name: 'Bench Ltd', country: 'NG', supportEmail: 'bench@bench.test', webhookUrl: receiver.url });
    const tenant = await services.auth.authenticate(merchant.keys.test.privateKey);
    const event = await paidOrderEvent(service, baseUrl, merchant.keys.test, tenant);

    // Baseline: the same POST (same size, same client code) straight to the receiver.
    const headers = { 'content-type': 'application/json', 'webhook-id': 'baseline', 'webhook-timestamp': '0', 'webhook-signature': 'v1,x' };
    const client = new WebhookHttpClient({ allowedNetworks: config.webhookAllowedNetworks });
    for (let i = 0; i < 20; i += 1) await client.post(receiver.url, event.body, headers, 10_000);
    const baseline: number[] = [];
    for (let i = 0; i < SEQUENTIAL_EVENTS; i += 1) {
      const t0 = performance.now();
      const r = await client.post(receiver.url, event.body, headers, 10_000);
      if (r.statusCode !== 200) throw new Error('bench: baseline POST failed');
      baseline.push(performance.now() - t0);
    }
    client.close();

    // One at a time: commit a delivery (a redelivery of the order event), wait for it at the receiver.
    const { arrivals } = receiver;
    const lags: number[] = [];
    const commits: number[] = [];
    const measureOne = async (count: number, record: boolean) => {
      for (let i = 0; i < count; i += 1) {
        const expected = arrivals.length + 1;
        const t0 = performance.now();
        await services.webhooks.redeliver(tenant, event.eventId);
        const committedAt = performance.now();
        await receiver.waitCount(expected);
        if (record) {
          commits.push(committedAt - t0);
          lags.push(arrivals[expected - 1]! - committedAt);
        }
      }
    };
    await measureOne(20, false); // warm-up
    await measureOne(SEQUENTIAL_EVENTS, true);

    // A burst: BURST_EVENTS deliveries committed back to back to one URL (2 in flight per URL).
    const before = arrivals.length;
    const burstCommits: number[] = [];
    const burstStart = performance.now();
    for (let i = 0; i < BURST_EVENTS; i += 1) {
      await services.webhooks.redeliver(tenant, event.eventId);
      burstCommits.push(performance.now());
    }
    await receiver.waitCount(before + BURST_EVENTS);
    const burstMs = arrivals[arrivals.length - 1]! - burstStart;
    // Deliveries go out oldest first: the i-th arrival is (about) the i-th commit.
    const burstLags = arrivals.slice(before).map((at, i) => at - burstCommits[i]!);

    const p50 = percentile(lags, 50);
    const b50 = percentile(baseline, 50);
    lines.push(
      `webhook dispatch lag, commit → receipt at a local receiver, ${SEQUENTIAL_EVENTS} events one at a time (${Buffer.byteLength(event.body)}-byte order body):`,
      `  gateway:   p50 ${ms(p50)}, p99 ${ms(percentile(lags, 99))}, max ${ms(Math.max(...lags))}`,
      `  baseline (the same POST straight to the receiver): p50 ${ms(b50)}, p99 ${ms(percentile(baseline, 99))}`,
      `  the gateway adds ${ms(p50 - b50)} at p50 (wake-up, claim and lease commit, secret lookup, signing); committing the delivery took p50 ${ms(percentile(commits, 50))}`,
      `burst: ${BURST_EVENTS} deliveries committed back to back to one URL (at most 2 in flight): all received ${ms(burstMs)} after the first commit, ` +
        `delivered at ${Math.round(((BURST_EVENTS - 1) * 1000) / (arrivals[arrivals.length - 1]! - arrivals[before]!))}/s, lag p50 ${ms(percentile(burstLags, 50))}, p99 ${ms(percentile(burstLags, 99))}`,
    );

    // Fairness: another merchant's receiver hangs (10 s deadline per attempt), with pings
    // queued under four URLs of two host names; this merchant's deliveries, one at a time.
    const hanging = await startReceiver(true);
    try {
      const port = new URL(hanging.url).port;
      const other = await services.merchants.createMerchant({ name: 'Hanging Ltd', country: 'NG', supportEmail: 'hang@bench.test', webhookUrl: hanging.url });
      const otherTenant = await services.auth.authenticate(other.keys.test.privateKey);
      for (const url of [`http://127.0.0.1:${port}/a`, `http://127.0.0.1:${port}/b`, `http://localhost:${port}/c`, `http://localhost:${port}/d`]) {
        await services.webhookEndpoints.setWebhookUrl(otherTenant, url);
        await services.webhooks.sendTestPing(otherTenant);
        await services.webhooks.sendTestPing(otherTenant);
      }
      await hanging.waitCount(1);
      lags.length = 0;
      commits.length = 0;
      await measureOne(FAIR_EVENTS, true);
      lines.push(
        `fairness: while another merchant's receiver hangs (${hanging.arrivals.length} of its 8 queued pings in flight, 10 s deadline each), ` +
          `${FAIR_EVENTS} deliveries of this merchant: lag p50 ${ms(percentile(lags, 50))}, p99 ${ms(percentile(lags, 99))} ` +
          `(${(percentile(lags, 50) / p50).toFixed(1)}x the p50 without it)`,
      );
    } finally {
      // Closing the hanging receiver first ends its requests at once instead of at their deadline.
      await hanging.close();
    }
  } finally {
    await service?.close();
    await receiver.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }

  lines.push(...(await busFanout()));
  return { name: 'webhooks and event fan-out', lines };
}

/** Time from publish until all 1,000 subscribers of one tenant have the change. */
async function busFanout(): Promise<string[]> {
  const change = (i: number): OrderStatusChange => ({
    eventId: `e${i}`,
    environmentId: 1,
    reference: `ORD-${i}`,
    statusId: 5,
    status: 'Successful',
    sequence: i,
  });

  const bus = new OrderStatusBus();
  let pending = 0;
  let done: () => void = () => {};
  const iterators = Array.from({ length: SUBSCRIBERS }, () => bus.subscribe(1)[Symbol.asyncIterator]());
  const loops = iterators.map(async (it) => {
    for (let next = await it.next(); !next.done; next = await it.next()) {
      pending -= 1;
      if (pending === 0) done();
    }
  });
  const runBus = async (i: number) => {
    pending = SUBSCRIBERS;
    const all = new Promise<void>((resolve) => (done = resolve));
    const t0 = performance.now();
    bus.publish(change(i));
    await all;
    return performance.now() - t0;
  };

  const emitter = new EventEmitter();
  emitter.setMaxListeners(SUBSCRIBERS + 1);
  let emitterPending = 0;
  let emitterDone: () => void = () => {};
  for (let s = 0; s < SUBSCRIBERS; s += 1) {
    emitter.on('change', () => {
      // Delivered on a microtask, as an async-iterator subscriber would resume.
      queueMicrotask(() => {
        emitterPending -= 1;
        if (emitterPending === 0) emitterDone();
      });
    });
  }
  const runEmitter = async (i: number) => {
    emitterPending = SUBSCRIBERS;
    const all = new Promise<void>((resolve) => (emitterDone = resolve));
    const t0 = performance.now();
    emitter.emit('change', change(i));
    await all;
    return performance.now() - t0;
  };

  for (let i = 0; i < 20; i += 1) {
    await runBus(i);
    await runEmitter(i);
  }
  const busTimes: number[] = [];
  const emitterTimes: number[] = [];
  for (let i = 0; i < PUBLISHES; i += 1) {
    busTimes.push(await runBus(i));
    emitterTimes.push(await runEmitter(i));
  }
  await Promise.all(iterators.map(async (it) => it.return?.()));
  await Promise.all(loops);

  const b50 = percentile(busTimes, 50);
  const e50 = percentile(emitterTimes, 50);
  return [
    `in-process OrderStatusBus fan-out to ${SUBSCRIBERS.toLocaleString('en-US')} subscribers of one tenant, ${PUBLISHES} publishes (time until all have the change):`,
    `  bus:      p50 ${us(b50)}, p99 ${us(percentile(busTimes, 99))} (${Math.round((b50 * 1e6) / SUBSCRIBERS)} ns per subscriber)`,
    `  baseline (node:events, 1,000 listeners resuming on a microtask): p50 ${us(e50)}, p99 ${us(percentile(emitterTimes, 99))}`,
    `  the bus takes ${(b50 / e50).toFixed(1)}x the baseline`,
  ];
}
