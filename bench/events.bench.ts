import 'reflect-metadata';
import { execFile, fork, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Pool } from 'pg';
import { loadConfig } from '../src/config';
import { openRuntime, type Runtime } from '../src/bootstrap';
import type { Tenant } from '../src/merchants/tenant';
import { SANDBOX_OTP } from '../src/payments/sandbox/sandbox.processor';
import { EVENTS_CHANNEL } from '../src/events/event-fanout';
import { webhookDestination } from '../src/merchants/webhook-url';
import { benchDatabaseEnv, freePort, scratchDatabase } from './bench-env';
import { redisServerProgram, startBenchRedis } from './bench-redis';
import { formatCount, percentile, type BenchRow, type BenchSection } from './report';
import type { SinkArrivals, SinkCommand } from './events-sink';

const ROOT = path.resolve(__dirname, '../..');
const SUBSCRIBERS = 1000;
const INSTANCES = 2;
/** Status changes while the subscribers listen, and their rate. */
const SUBSCRIBER_CHANGES = Number(process.env.BENCH_EVENTS_CHANGES ?? 30);
const SUBSCRIBER_RATE = 10;
/** Settlements in the webhook phase, and their rate. */
const SETTLE_RATE = Number(process.env.BENCH_EVENTS_RATE ?? 200);
/**
 * Orders settled through the domain at that rate (each made beforehand, through the domain too):
 * five seconds' worth, so that the rate is a sustained one. A half-second burst straight after
 * start-up measured the processes warming up instead (settlement calls p50 ~300 ms in its first
 * half second, ~15 ms once warm); the line prints the first second apart.
 */
const DOMAIN_SETTLEMENTS = Number(process.env.BENCH_EVENTS_SETTLEMENTS ?? 1000);
/** How long the SQL generator writes settlement events at that rate. */
const GENERATED_SECONDS = Number(process.env.BENCH_EVENTS_SECONDS ?? 4);
/** Merchants the settlements are spread over, each with its own receiver: each destination may have 2 requests in flight (WEBHOOK_ENDPOINT_CONCURRENCY). */
const WEBHOOK_MERCHANTS = 16;
const WAIT_MS = 20_000;

const clock = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The receiving process (subscribers and webhook receivers), driven over IPC. */
class Sink {
  private readonly child: ChildProcess;
  private next = 0;
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();

  constructor() {
    this.child = fork(path.join(__dirname, 'events-sink.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child.on('message', (m: { id: number; ok: boolean; result?: unknown; error?: string }) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (m.ok) p?.resolve(m.result);
      else p?.reject(new Error(`events sink: ${m.error}`));
    });
    this.child.once('exit', (code) => {
      for (const p of this.pending.values()) p.reject(new Error(`events sink exited with ${code}`));
      this.pending.clear();
    });
  }

  call<T>(command: SinkCommand): Promise<T> {
    const id = (this.next += 1);
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.child.send({ id, command });
    });
  }

  close(): void {
    this.child.kill('SIGKILL');
  }
}

interface ServiceProcess {
  wsUrl: string;
  child: ChildProcess;
  stderr(): string;
}

/** CPU time (user + system) a process has used so far, in ms; NaN where /proc is not available. */
function cpuMs(pid: number | undefined): number {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** One instance of the built service (`node dist/src/main.js`), as it runs in production. */
async function spawnService(databaseUrl: string, extraEnv: Record<string, string> = {}): Promise<ServiceProcess> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-events-'));
  // BENCH_EVENTS_PROFILE=<dir>: each instance writes a CPU profile there when it stops.
  const profile = process.env.BENCH_EVENTS_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_EVENTS_PROFILE)}`] : [];
  const child = spawn(process.execPath, [...profile, path.join(ROOT, 'dist/src/main.js')], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      NODE_ENV: 'production',
      ...benchDatabaseEnv(),
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      MIGRATE_ON_START: 'false',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: baseUrl,
      LOG_LEVEL: 'warn',
      SCHEDULER_INTERVAL_MS: '0',
      // The bench's receivers and subscribers are on loopback, one address for a thousand sockets.
      WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
      RATE_LIMIT: 'off',
      MAX_CONNECTIONS_PER_IP: '0',
      DECRYPT_THREADS: '0',
      // Dispatcher settings to try (e.g. WEBHOOK_ENDPOINT_CONCURRENCY=4 npm run bench -- events).
      ...Object.fromEntries(
        ['WEBHOOK_CONCURRENCY', 'WEBHOOK_ENDPOINT_CONCURRENCY', 'WEBHOOK_MERCHANT_CONCURRENCY'].flatMap((k) => (process.env[k] ? [[k, process.env[k]!]] : [])),
      ),
      ...extraEnv,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`bench: a service instance exited with ${child.exitCode}: ${stderr}`);
    try {
      const res = await fetch(`${baseUrl}/health`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`bench: a service instance did not start: ${stderr}`);
    await sleep(100);
  }
  return { wsUrl: `ws://127.0.0.1:${port}/graphql`, child, stderr: () => stderr };
}

interface PendingPayment {
  tenant: Tenant;
  orderReference: string;
  paymentReference: string;
}

/**
 * Orders waiting for their 3-D Secure answer, made through the domain (order create, then pay
 * with the sandbox's approving card): completing one is a settlement to Successful, with its
 * outbox event, NOTIFY and (when the merchant has a URL) webhook delivery.
 */
async function pendingPayments(runtime: Runtime, tenants: Tenant[], count: number, tag: string): Promise<PendingPayment[]> {
  const { orders, payments } = runtime.ctx.services;
  const made: PendingPayment[] = [];
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const tenant = tenants[i % tenants.length]!;
      const reference = `EV-${tag}-${Date.now().toString(36)}-${i}`;
      await orders.create(tenant, {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada${i % 100}@bench.test` },
        order: { amount: '1500.00', reference, description: 'Events bench', currency: 'NGN' },
        payment: { redirectUrl: 'https://shop.bench.test/back' },
      });
      const paid = await payments.pay(tenant, {
        reference,
        paymentOption: 'C',
        country: 'NG',
        card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123' },
      });
      if (paid.final) throw new Error(`bench: ${reference} settled without 3-D Secure`);
      made.push({ tenant, orderReference: reference, paymentReference: paid.payment.reference });
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
  return made;
}

interface Settled {
  reference: string;
  /** When the call began, and when its transaction had committed (the call returned). */
  startedAt: number;
  committedAt: number;
}

/**
 * Completes the payments at `rate` per second (open loop: each starts at its scheduled time,
 * whether or not earlier ones have finished), through PaymentService.completeAuthentication:
 * to Processing, the sandbox's answer, then the settlement transaction.
 */
async function settleAtRate(runtime: Runtime, items: PendingPayment[], rate: number): Promise<{ settled: Settled[]; elapsedMs: number; failures: string[] }> {
  const { payments } = runtime.ctx.services;
  const settled: Settled[] = [];
  const failures: string[] = [];
  const start = performance.now();
  const inflight = new Set<Promise<void>>();
  for (let i = 0; i < items.length; i += 1) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const item = items[i]!;
    const startedAt = clock();
    const work = payments.completeAuthentication(item.paymentReference, { method: 'C', otp: SANDBOX_OTP }).then(
      (outcome) => {
        if (outcome.status !== 'successful') failures.push(`${item.orderReference}: ${outcome.status}`);
        else settled.push({ reference: item.orderReference, startedAt, committedAt: clock() });
      },
      (err: unknown) => void failures.push(`${item.orderReference}: ${err instanceof Error ? err.message : String(err)}`),
    );
    inflight.add(work);
    void work.finally(() => inflight.delete(work));
  }
  await Promise.all(inflight);
  return { settled, elapsedMs: performance.now() - start, failures };
}

async function waitFor(what: string, done: () => Promise<boolean>, ms = WAIT_MS): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) return false;
    await sleep(100);
  }
  return true;
}

/**
 * When each change was committed, as nearly as can be seen: the earlier of the driver's return
 * from its call and PostgreSQL handing the commit's notification to the sink's own LISTEN
 * connection (both come after the commit; under load either can lag).
 */
function commitTimes(committed: Array<[string, number]>, notifications: Array<[string, number, string]>, key: 0 | 2): Array<[string, number]> {
  const heard = new Map<string, number>();
  for (const n of notifications) if (!heard.has(n[key])) heard.set(n[key], n[1]);
  return committed.map(([id, at]) => [id, Math.min(at, heard.get(id) ?? at)]);
}

/** Latency from each commit to its first webhook; arrivals keyed by reference (key 0) or by webhook-id (key 2). */
function webhookLags(
  committed: Array<[string, number]>,
  arrivals: Array<[string, number, string]>,
  key: 0 | 2,
): { p50: number; p99: number; max: number; missing: number } {
  const at = new Map(committed);
  const seen = new Set<string>();
  const lags: number[] = [];
  for (const arrival of arrivals) {
    const id = arrival[key];
    const t0 = at.get(id);
    if (t0 === undefined || seen.has(id)) continue;
    seen.add(id);
    lags.push(arrival[1] - t0);
  }
  return { p50: percentile(lags, 50), p99: percentile(lags, 99), max: percentile(lags, 100), missing: committed.length - lags.length };
}

/**
 * Writes settlement events at `rate` per second for `seconds` (open loop), each in one
 * statement: a copy of a real settlement event of the merchant (its frozen body) under a new
 * event id, its pending delivery to the merchant's URL, and the NOTIFY that wakes the
 * dispatchers; exactly the rows and the notification a settlement writes. Returns the commit
 * time of each event id.
 */
async function generateEvents(
  databaseUrl: string,
  merchants: Array<{ environmentId: number; url: string }>,
  rate: number,
  seconds: number,
): Promise<{ committed: Array<[string, number]>; elapsedMs: number; failures: number }> {
  const pool = new Pool({ connectionString: databaseUrl, max: 16 });
  const committed: Array<[string, number]> = [];
  let failures = 0;
  try {
    const templates: Array<{ id: string; url: string; notification: string }> = [];
    for (const m of merchants) {
      const { rows } = await pool.query<{ id: string; order_id: number; sequence: number; reference: string }>(
        `select e.id, e.order_id, e.sequence, o.reference from outbox_event e join checkout_order o on o.id = e.order_id
          where e.environment_id = $1 and e.notify_type = 'successful' order by e.created_at desc limit 1`,
        [m.environmentId],
      );
      const t = rows[0];
      if (!t) throw new Error('bench: no settlement event to copy');
      const change = { eventId: '', environmentId: m.environmentId, reference: t.reference, statusId: 5, status: 'Successful', sequence: t.sequence };
      templates.push({ id: t.id, url: m.url, notification: JSON.stringify({ k: 'order', c: change, d: true }) });
    }
    const total = Math.round(rate * seconds);
    const start = performance.now();
    const inflight = new Set<Promise<void>>();
    for (let i = 0; i < total; i += 1) {
      const wait = start + (i * 1000) / rate - performance.now();
      if (wait > 1) await sleep(wait);
      const t = templates[i % templates.length]!;
      const eventId = randomUUID();
      const work = pool
        .query(
          `with event as (
             insert into outbox_event (id, environment_id, order_id, notify, notify_type, sequence, payload, created_at)
             select $1, environment_id, order_id, notify, notify_type, sequence, payload, now() from outbox_event where id = $2
             returning id
           ), delivery as (
             insert into webhook_delivery (event_id, url, destination, next_attempt_at) select id, $3, $4, now() from event returning id
           )
           select pg_notify($5, $6) from delivery`,
          [eventId, t.id, t.url, webhookDestination(t.url), EVENTS_CHANNEL, t.notification.replace('"eventId":""', `"eventId":"${eventId}"`)],
        )
        .then(
          () => void committed.push([eventId, clock()]),
          () => void (failures += 1),
        );
      inflight.add(work);
      void work.finally(() => inflight.delete(work));
    }
    await Promise.all(inflight);
    return { committed, elapsedMs: performance.now() - start, failures };
  } finally {
    await pool.end();
  }
}

/**
 * What AsyncLocalStorage costs a process once something has used it (MikroORM's
 * `transactional()` and `flush()` do): from then on every promise runs the async hooks that
 * carry its context. The same promise-heavy work (async calls awaiting async calls, as in
 * GraphQL execution and pg queries) in a fresh process, with and without one
 * `AsyncLocalStorage.run()` first; best of three each, CPU time per awaited call.
 */
async function asyncHooksCost(): Promise<{ offNs: number; onNs: number }> {
  const code = `
    const { AsyncLocalStorage } = require('node:async_hooks');
    if (process.argv[1] === 'on') new AsyncLocalStorage().run(1, () => undefined);
    async function leaf(i) { return i; }
    async function mid(i) { return (await leaf(i)) + (await leaf(i + 1)); }
    (async () => {
      for (let i = 0; i < 200000; i += 1) await mid(i);
      const t0 = process.cpuUsage();
      const n = 1000000;
      for (let i = 0; i < n; i += 1) await mid(i);
      const c = process.cpuUsage(t0);
      process.stdout.write(String(((c.user + c.system) * 1000) / (n * 3)));
    })();`;
  const once = (mode: 'on' | 'off') =>
    new Promise<number>((resolve, reject) => execFile(process.execPath, ['-e', code, mode], (err, stdout) => (err ? reject(err) : resolve(Number(stdout)))));
  const off: number[] = [];
  const on: number[] = [];
  for (let i = 0; i < 3; i += 1) {
    off.push(await once('off'));
    on.push(await once('on'));
  }
  return { offNs: Math.min(...off), onNs: Math.min(...on) };
}

const fmt = (n: number) => (Number.isFinite(n) ? `${n < 10 ? n.toFixed(1) : Math.round(n)} ms` : 'n/a');

/** The driver's configuration: the domain services on the scratch database, delivering no webhooks itself. */
function driverConfig(databaseUrl: string, dataDir: string, redisUrl?: string) {
  return loadConfig({
    ...benchDatabaseEnv(),
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SCHEDULER_INTERVAL_MS: '0',
    WEBHOOK_CONCURRENCY: '0',
    WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8',
    DATABASE_POOL_SIZE: '16',
    DECRYPT_THREADS: '0',
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
  });
}

async function stopServices(services: ServiceProcess[]): Promise<void> {
  for (const s of services) if (s.child.exitCode === null) s.child.kill('SIGTERM');
  await Promise.all(services.map((s) => new Promise<void>((resolve) => (s.child.exitCode !== null ? resolve() : s.child.once('exit', () => resolve())))));
  services.length = 0;
}

/** A bare `ws` broadcaster (bench/ws-baseline-server.ts) hearing the same channel as the service. */
async function startBaselineServer(databaseUrl: string, redisUrl?: string): Promise<{ url: string; child: ChildProcess }> {
  const child = fork(path.join(__dirname, 'ws-baseline-server.js'), [JSON.stringify({ databaseUrl, channel: EVENTS_CHANNEL, redisUrl })], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (m: { port: number }) => resolve(m.port));
    child.once('exit', (code) => reject(new Error(`bench: the ws baseline server exited with ${code}`)));
  });
  return { url: `ws://127.0.0.1:${port}/`, child };
}

interface SubscriberRound {
  settled: number;
  failures: string[];
  lags: number[];
  expected: number;
  /** CPU of the serving processes per message delivered, µs (idle time included). */
  cpuPerMessageUs: number;
  callP50: number;
  warm: boolean;
  errors: number;
}

/**
 * SUBSCRIBERS sockets spread over `urls` (graphql-ws subscribers of orderStatusChanged, or
 * plain sockets to the baseline broadcasters), a few warm-up settlements until every socket
 * hears one, then `probes` settled at SUBSCRIBER_RATE: the latency from each commit to each arrival.
 */
async function subscriberRound(
  runtime: Runtime,
  sink: Sink,
  target: { urls: string[]; pids: Array<number | undefined>; plain: boolean; apiKey: string },
  probes: PendingPayment[],
  warmups: PendingPayment[],
): Promise<SubscriberRound> {
  if (target.plain) await sink.call<number>({ cmd: 'subscribe-plain', urls: target.urls, count: SUBSCRIBERS });
  else await sink.call<number>({ cmd: 'subscribe', urls: target.urls, apiKey: target.apiKey, count: SUBSCRIBERS });
  const arrived = async () => (await sink.call<{ subscriptions: number }>({ cmd: 'counts' })).subscriptions;
  // A graphql-ws subscription is registered on the server shortly after its socket connects:
  // changes until every subscriber has one are warm-up.
  let warm = false;
  for (const probe of warmups) {
    await sink.call({ cmd: 'collect' });
    await settleAtRate(runtime, [probe], 1);
    warm = await waitFor('warm-up', async () => (await arrived()) >= SUBSCRIBERS, 5_000);
    if (warm) break;
  }
  await sink.call({ cmd: 'collect' });
  const cpu = () => target.pids.reduce<number>((sum, pid) => sum + cpuMs(pid), 0);
  const cpuBefore = cpu();
  const run = await settleAtRate(runtime, probes, SUBSCRIBER_RATE);
  const expected = run.settled.length * SUBSCRIBERS;
  await waitFor('subscribers', async () => (await arrived()) >= expected);
  const cpuPerMessageUs = ((cpu() - cpuBefore) * 1000) / Math.max(1, expected);
  const arrivals = await sink.call<SinkArrivals>({ cmd: 'collect' });
  await sink.call({ cmd: 'unsubscribe' });
  const committed = new Map(
    commitTimes(
      run.settled.map((s) => [s.reference, s.committedAt]),
      arrivals.notifications,
      0,
    ),
  );
  const lags = arrivals.subscriptions.flatMap(([reference, at]) => (committed.has(reference) ? [at - committed.get(reference)!] : []));
  return {
    settled: run.settled.length,
    failures: run.failures,
    lags,
    expected,
    cpuPerMessageUs,
    callP50: percentile(
      run.settled.map((s) => s.committedAt - s.startedAt),
      50,
    ),
    warm,
    errors: arrivals.errors.length,
  };
}

/**
 * The subscriber measurement over one transport: first the baseline (a bare `ws` broadcaster
 * per instance, hearing the same commits), then the service's graphql-ws subscribers, each with
 * its own settlements of the same merchant at the same rate.
 */
async function subscriberPhase(
  transport: 'NOTIFY' | 'Redis',
  runtime: Runtime,
  sink: Sink,
  services: ServiceProcess[],
  tenant: Tenant,
  apiKey: string,
  databaseUrl: string,
  redisUrl?: string,
): Promise<{ lines: string[]; row: BenchRow }> {
  const per = SUBSCRIBER_CHANGES + 3;
  const made = await pendingPayments(runtime, [tenant], 2 * per, transport === 'NOTIFY' ? 'SN' : 'SR');
  const baselineServers = await Promise.all(services.map(() => startBaselineServer(databaseUrl, redisUrl)));
  let base: SubscriberRound;
  try {
    base = await subscriberRound(
      runtime,
      sink,
      { urls: baselineServers.map((b) => b.url), pids: baselineServers.map((b) => b.child.pid), plain: true, apiKey },
      made.slice(3, per),
      made.slice(0, 3),
    );
  } finally {
    for (const b of baselineServers) b.child.kill('SIGKILL');
  }
  const svc = await subscriberRound(
    runtime,
    sink,
    { urls: services.map((s) => s.wsUrl), pids: services.map((s) => s.child.pid), plain: false, apiKey },
    made.slice(per + 3),
    made.slice(per, per + 3),
  );
  const stats = (r: SubscriberRound) => ({
    p50: percentile(r.lags, 50),
    p99: percentile(r.lags, 99),
    max: percentile(r.lags, 100),
    missing: r.expected - r.lags.length,
  });
  const b = stats(base);
  const v = stats(svc);
  const describe = (r: SubscriberRound, x: ReturnType<typeof stats>) =>
    `p50 ${fmt(x.p50)}, p99 ${fmt(x.p99)}, max ${fmt(x.max)}; ${formatCount(r.lags.length)} arrivals${x.missing > 0 ? `, ${formatCount(x.missing)} missing` : ''}` +
    `${r.failures.length ? `, ${r.failures.length} settlements failed (${r.failures[0]})` : ''}${r.warm ? '' : ' (warm-up incomplete)'}; ` +
    `CPU per message delivered ${Math.round(r.cpuPerMessageUs)} µs; settlement call p50 ${fmt(r.callP50)}`;
  const via = transport === 'NOTIFY' ? 'PostgreSQL NOTIFY (no REDIS_URL)' : 'Redis pub/sub (REDIS_URL, a redis-server of the bench)';
  const lines = [
    `subscribers via ${via}: ${formatCount(SUBSCRIBERS)} sockets over ${services.length} processes, one merchant environment, ${SUBSCRIBER_CHANGES} settlements at ${SUBSCRIBER_RATE}/s each`,
    `  baseline, bare ws broadcaster (same channel, same message, serialised once): commit → socket ${describe(base, b)}`,
    `  service, graphql-ws orderStatusChanged subscribers:                           commit → socket ${describe(svc, v)}`,
  ];
  const met = v.missing === 0 && svc.failures.length === 0 && v.p99 < 100;
  const row: BenchRow = {
    path: `settlement commit → graphql-ws subscriber, ${formatCount(SUBSCRIBERS)} subscribers on ${services.length} instances, via ${transport}`,
    target: 'p99 < 100 ms',
    service: `p99 ${fmt(v.p99)}, p50 ${fmt(v.p50)}`,
    baseline: `bare ws broadcast: p99 ${fmt(b.p99)}, p50 ${fmt(b.p50)}`,
    // Latency: the service's p99 over the baseline's (1× is as fast as a bare broadcast).
    ratio: v.p99 / b.p99,
    met,
    note: met
      ? 'ratio: p99 over the baseline p99'
      : v.missing > 0
        ? `${formatCount(v.missing)} of ${formatCount(svc.expected)} arrivals missing`
        : `p99 ${fmt(v.p99)}`,
    data: {
      transport,
      subscribers: SUBSCRIBERS,
      instances: services.length,
      changes: svc.settled,
      service: { ...v, cpuPerMessageUs: svc.cpuPerMessageUs, errors: svc.errors, callP50Ms: svc.callP50 },
      baseline: { ...b, cpuPerMessageUs: base.cpuPerMessageUs, callP50Ms: base.callP50 },
    },
  };
  return { lines, row };
}

/**
 * Event latency on a PostgreSQL server, two instances of the built service sharing it:
 * (1) status change → graphql-ws subscriber, 1,000 subscribers spread over both instances;
 * (2) status change → webhook received by a 2xx receiver while orders settle at 200/s.
 * The changes are made by this process through the domain services (a third instance on the
 * same database, delivering nothing itself); the subscribers and receivers live in another
 * process and stamp arrivals with the machine's clock.
 */
export async function runEventsBench(): Promise<BenchSection> {
  const name = 'Events: status change → subscriber and → webhook (two instances, one PostgreSQL)';
  const subscriberPath = `settlement commit → graphql-ws subscriber, ${formatCount(SUBSCRIBERS)} subscribers on ${INSTANCES} instances`;
  const webhookPath = `status change → webhook received (2xx receiver) at ${SETTLE_RATE} settlements/s`;
  const subscriberTarget = 'p99 < 100 ms';
  const webhookTarget = 'p99 < 1 s';
  const serverUrl = process.env.BENCH_DATABASE_URL;
  if (!serverUrl) {
    const note = 'needs a PostgreSQL server: set BENCH_DATABASE_URL';
    return {
      name,
      lines: [`skipped: ${note}`],
      rows: [
        { path: subscriberPath, target: subscriberTarget, service: '', met: null, note },
        { path: webhookPath, target: webhookTarget, service: '', met: null, note },
      ],
    };
  }

  const lines: string[] = [];
  const rows: BenchRow[] = [];
  const scratch = await scratchDatabase(serverUrl, 'events');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-events-driver-'));
  const sink = new Sink();
  const services: ServiceProcess[] = [];
  let runtime: Runtime | undefined;
  try {
    // The driver: the domain services on the scratch database (migrating it), delivering nothing.
    runtime = await openRuntime(driverConfig(scratch.url, dataDir), { migrate: true });
    for (let i = 0; i < INSTANCES; i += 1) services.push(await spawnService(scratch.url));
    const { merchants, auth } = runtime.ctx.services;

    // (1) Subscribers: NOTIFY (no REDIS_URL), then Redis pub/sub with a redis-server of the bench's own.
    const watched = await merchants.createMerchant({ name: 'Bench Events Subscribed', country: 'NG', supportEmail: 'subs@bench.test', keyBits: 2048 });
    const watchedTenant = await auth.authenticate(watched.keys.test.privateKey);
    await sink.call({ cmd: 'listen', databaseUrl: scratch.url, channel: EVENTS_CHANNEL });
    const onlyWebhooks = process.env.BENCH_EVENTS_ONLY === 'webhooks';
    if (!onlyWebhooks) {
      const notifyPhase = await subscriberPhase('NOTIFY', runtime, sink, services, watchedTenant, watched.keys.test.publicKey, scratch.url);
      lines.push(...notifyPhase.lines);
      rows.push(notifyPhase.row);
    }
    if (!onlyWebhooks && process.env.BENCH_EVENTS_REDIS !== 'off') {
      const program = redisServerProgram();
      const redis = program ? await startBenchRedis(program) : undefined;
      if (!redis) {
        lines.push('subscribers with REDIS_URL: skipped: no redis-server (or valkey-server) on PATH');
      } else {
        const redisServices: ServiceProcess[] = [];
        let redisRuntime: Runtime | undefined;
        try {
          await sink.call({ cmd: 'listen-redis', redisUrl: redis.url, channel: EVENTS_CHANNEL });
          redisRuntime = await openRuntime(driverConfig(scratch.url, dataDir, redis.url), { migrate: false });
          for (let i = 0; i < INSTANCES; i += 1) redisServices.push(await spawnService(scratch.url, { REDIS_URL: redis.url }));
          const redisPhase = await subscriberPhase(
            'Redis',
            redisRuntime,
            sink,
            redisServices,
            watchedTenant,
            watched.keys.test.publicKey,
            scratch.url,
            redis.url,
          );
          lines.push(...redisPhase.lines);
          rows.push(redisPhase.row);
        } finally {
          await stopServices(redisServices);
          await redisRuntime?.close();
          await sink.call({ cmd: 'unlisten' });
          await sink.call({ cmd: 'listen', databaseUrl: scratch.url, channel: EVENTS_CHANNEL });
          await redis.stop();
        }
      }
    }

    // (2) Webhooks at SETTLE_RATE: (a) orders settling through the domain, (b) the same event
    // writes made by a SQL generator, for when this machine cannot settle that fast.
    if (process.env.BENCH_EVENTS_ONLY !== 'subscribers') {
      const receiverUrls = await sink.call<string[]>({ cmd: 'receivers', count: WEBHOOK_MERCHANTS });
      const tenants: Tenant[] = [];
      for (let i = 0; i < WEBHOOK_MERCHANTS; i += 1) {
        const m = await merchants.createMerchant({
          name: `Bench Events Hooks ${i}`,
          country: 'NG',
          supportEmail: `hooks${i}@bench.test`,
          keyBits: 2048,
          webhookUrl: receiverUrls[i]!,
        });
        tenants.push(await auth.authenticate(m.keys.test.privateKey));
      }
      const warmCount = 8;
      const setupStart = performance.now();
      const items = await pendingPayments(runtime, tenants, DOMAIN_SETTLEMENTS + warmCount, 'W');
      const setupMs = performance.now() - setupStart;
      await settleAtRate(runtime, items.splice(0, warmCount), 50);
      await waitFor('warm-up webhooks', async () => (await sink.call<{ webhooks: number }>({ cmd: 'counts' })).webhooks >= warmCount, 10_000);
      await sink.call({ cmd: 'collect' });

      // (a) Through the domain.
      const run = await settleAtRate(runtime, items, SETTLE_RATE);
      await waitFor('webhooks', async () => (await sink.call<{ webhooks: number }>({ cmd: 'counts' })).webhooks >= run.settled.length);
      const domainArrivals = await sink.call<SinkArrivals>({ cmd: 'collect' });
      const domain = webhookLags(
        commitTimes(
          run.settled.map((s) => [s.reference, s.committedAt]),
          domainArrivals.notifications,
          0,
        ),
        domainArrivals.webhooks,
        0,
      );
      const achieved = (run.settled.length * 1000) / run.elapsedMs;
      const callP50 = percentile(
        run.settled.map((s) => s.committedAt - s.startedAt),
        50,
      );
      const callP99 = percentile(
        run.settled.map((s) => s.committedAt - s.startedAt),
        99,
      );
      const firstStart = Math.min(...run.settled.map((s) => s.startedAt));
      const callsP50 = (firstSecond: boolean) =>
        percentile(
          run.settled.filter((s) => s.startedAt - firstStart < 1000 === firstSecond).map((s) => s.committedAt - s.startedAt),
          50,
        );
      lines.push(
        `webhooks (a): ${formatCount(run.settled.length)} orders settling through PaymentService over ${WEBHOOK_MERCHANTS} merchants (one receiver each), asked at ${SETTLE_RATE}/s, ` +
          `achieved ${Math.round(achieved)}/s${run.failures.length ? `, ${run.failures.length} failed (${run.failures[0]})` : ''}; settlement call p50 ${fmt(callP50)}, p99 ${fmt(callP99)} ` +
          `(p50 in the first second ${fmt(callsP50(true))}, after it ${fmt(callsP50(false))}) ` +
          `(making each pending order: ${fmt(setupMs / (DOMAIN_SETTLEMENTS + warmCount))} of wall time)`,
        `  commit → webhook received: p50 ${fmt(domain.p50)}, p99 ${fmt(domain.p99)}, max ${fmt(domain.max)}${domain.missing > 0 ? `; ${formatCount(domain.missing)} not received within ${WAIT_MS / 1000} s` : ''}`,
      );
      const rateOk = achieved >= SETTLE_RATE * 0.95;
      const domainMet = domain.missing === 0 && run.failures.length === 0 && rateOk && domain.p99 < 1000;
      rows.push({
        path: `${webhookPath}, orders settling through the domain`,
        target: webhookTarget,
        service: `p99 ${fmt(domain.p99)}, p50 ${fmt(domain.p50)} at ${Math.round(achieved)} settlements/s`,
        met: domainMet,
        note: domainMet
          ? undefined
          : domain.missing > 0
            ? `${formatCount(domain.missing)} of ${formatCount(run.settled.length)} webhooks not received`
            : !rateOk
              ? `this machine settled ${Math.round(achieved)} orders/s through the domain (settlement call p50 ${fmt(callP50)}), not ${SETTLE_RATE}: the rate is not reached`
              : `p99 ${fmt(domain.p99)}`,
        data: {
          settlements: run.settled.length,
          askedRate: SETTLE_RATE,
          achievedRate: achieved,
          merchants: WEBHOOK_MERCHANTS,
          missing: domain.missing,
          p50Ms: domain.p50,
          p99Ms: domain.p99,
          maxMs: domain.max,
          callP50Ms: callP50,
          callP99Ms: callP99,
        },
      });

      // (b) The same writes from a SQL generator at the full rate.
      const serviceCpu = () => services.reduce<number>((sum, s) => sum + cpuMs(s.child.pid), 0);
      const genCpuBefore = serviceCpu();
      const generated = await generateEvents(
        scratch.url,
        tenants.map((t, i) => ({ environmentId: t.environmentId, url: receiverUrls[i]! })),
        SETTLE_RATE,
        GENERATED_SECONDS,
      );
      await waitFor('generated webhooks', async () => (await sink.call<{ webhooks: number }>({ cmd: 'counts' })).webhooks >= generated.committed.length);
      const genCpuPerWebhookMs = (serviceCpu() - genCpuBefore) / Math.max(1, generated.committed.length);
      const genArrivals = await sink.call<SinkArrivals>({ cmd: 'collect' });
      const gen = webhookLags(commitTimes(generated.committed, genArrivals.notifications, 2), genArrivals.webhooks, 2);
      const genRate = (generated.committed.length * 1000) / generated.elapsedMs;
      lines.push(
        `webhooks (b): ${formatCount(generated.committed.length)} settlement events written by a SQL generator (per event one statement: the outbox row, its delivery and the NOTIFY, as a settlement writes them) ` +
          `at ${Math.round(genRate)}/s${generated.failures ? `, ${generated.failures} failed` : ''}`,
        `  commit → webhook received: p50 ${fmt(gen.p50)}, p99 ${fmt(gen.p99)}, max ${fmt(gen.max)}${gen.missing > 0 ? `; ${formatCount(gen.missing)} not received within ${WAIT_MS / 1000} s` : ''}; ` +
          `service CPU per webhook delivered: ${genCpuPerWebhookMs.toFixed(2)} ms (both instances: claim, sign, POST, record), ` +
          `${((genCpuPerWebhookMs * SETTLE_RATE) / 1000).toFixed(2)} cores at ${SETTLE_RATE}/s`,
      );
      const genRateOk = genRate >= SETTLE_RATE * 0.95;
      const genMet = gen.missing === 0 && generated.failures === 0 && genRateOk && gen.p99 < 1000;
      rows.push({
        path: `${webhookPath}, events written at that rate by a generator`,
        target: webhookTarget,
        service: `p99 ${fmt(gen.p99)}, p50 ${fmt(gen.p50)} at ${Math.round(genRate)} events/s`,
        met: genMet,
        note: genMet
          ? 'the delivery pipeline (NOTIFY, claim, POST, record) at the full rate; the settlements themselves are not made'
          : gen.missing > 0
            ? `${formatCount(gen.missing)} of ${formatCount(generated.committed.length)} webhooks not received`
            : !genRateOk
              ? `the generator reached ${Math.round(genRate)} events/s`
              : `p99 ${fmt(gen.p99)}`,
        data: {
          events: generated.committed.length,
          rate: genRate,
          missing: gen.missing,
          p50Ms: gen.p50,
          p99Ms: gen.p99,
          maxMs: gen.max,
          serviceCpuPerWebhookMs: genCpuPerWebhookMs,
        },
      });
    }
    const hooks = await asyncHooksCost();
    lines.push(
      `AsyncLocalStorage once used (MikroORM transactional()/flush()): an awaited async call costs ${hooks.onNs.toFixed(0)} ns of CPU instead of ${hooks.offNs.toFixed(0)} ns ` +
        `(${(hooks.onNs / hooks.offNs).toFixed(2)}×, for the whole process); the webhook dispatcher and the fan-out no longer use it`,
    );
    lines.push(`  load average (1 min) at the end: ${os.loadavg()[0]!.toFixed(1)}`);
  } finally {
    sink.close();
    await stopServices(services);
    await runtime?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    await scratch.drop();
  }
  // Waiting for a CPU is most of these latencies on a busy machine: each row says how busy it was.
  const load = ` (load average ${os.loadavg()[0]!.toFixed(1)} on ${os.availableParallelism()} cores)`;
  for (const row of rows) if (row.met === false && row.note) row.note += load;
  return { name, lines, rows };
}
