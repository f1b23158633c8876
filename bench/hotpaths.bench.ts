import 'reflect-metadata';
import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { loadConfig } from '../src/config';
import { openRuntime } from '../src/bootstrap';
import { generateRsaKeyMaterial } from '../src/crypto/encryption-key';
import { benchDatabaseEnv, freePort } from './bench-env';
import { redisServerProgram, startBenchRedis, type BenchRedis } from './bench-redis';
import { OrderStatus } from '../src/orders/order-status';
import { orderPlaintext, type LoadRequest, type LoadResult } from './order-load';
import type { BenchRow, BenchSection } from './report';

/**
 * The REST hot paths against their irreducible baselines, in one run on the same PostgreSQL:
 * encrypted order/create (2048- and 4096-bit keys), order/verify and order/status of the
 * service (a process of its own, RATE_LIMIT=off) beside a bare node:http server doing only
 * the decryption and the one statement each needs (bench/baselines/irreducible-server.ts).
 * Each pair is measured in interleaved rounds (which goes first alternates), 32 connections
 * from a load generator in another process; throughput is the median of the rounds, p99 over
 * all of a path's requests. Then the service's memory: its highest RSS during the rounds, and
 * the JS heap allocated per order create (V8's sampling heap profiler, collected objects
 * included) over a separate run of creates.
 */
const CONCURRENCY = 32;
/**
 * The captures prepared per second of a round (BENCH_HOT_CAPTURES_PER_SECOND): each is an order of
 * its own, paid during the setup (about 17 ms of CPU each), so it is sized near the most a round has
 * taken on this machine (130–320 captures/s) rather than as high as the other paths'. A round
 * that still uses them up says so, and its rate is taken over the time until then, while all
 * CONCURRENCY connections had a capture in flight (LoadResult.fullMs), never over the tail after it.
 */
const CAPTURES_PER_SECOND = Number(process.env.BENCH_HOT_CAPTURES_PER_SECOND ?? 300);

interface Ipc {
  child: ChildProcess;
  call<T>(msg: object): Promise<T>;
  exited: Promise<never>;
}

function ipc(file: string, options: { execArgv?: string[] } = {}): Ipc {
  const child = fork(path.join(__dirname, file), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: options.execArgv ?? [] });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`bench: ${file} exited with ${code}`))));
  exited.catch(() => undefined);
  let chain: Promise<unknown> = Promise.resolve();
  const call = <T>(msg: object): Promise<T> => {
    const result = chain.then(() =>
      Promise.race([
        new Promise<T>((resolve) => {
          child.once('message', (m) => resolve(m as T));
          child.send(msg);
        }),
        exited,
      ]),
    );
    chain = result.catch(() => undefined);
    return result;
  };
  return { child, call, exited };
}

async function load(req: LoadRequest): Promise<LoadResult> {
  const gen = ipc('order-load.js');
  try {
    await gen.call(req);
    return await gen.call<LoadResult>({ go: true });
  } finally {
    gen.child.kill();
  }
}

function percentile(values: number[], p: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * (sorted.length - 1)))] ?? Number.NaN;
}

async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = target.pathname.replace(/^\//, '');
  if (!/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`bench: unsafe database name ${name}`);
  target.pathname = '/postgres';
  const admin = new Client({ connectionString: target.toString() });
  await admin.connect();
  try {
    const exists = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (exists.rowCount === 0) await admin.query(`create database "${name}"`);
  } finally {
    await admin.end();
  }
}

/**
 * `count` copies of an Initiated order made by the service (`templateId`), referenced
 * `<prefix>-<i>`: the same customer, link, amounts and fee, ready to be paid once each.
 */
async function copyOrders(url: string, templateId: number, prefix: string, count: number): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ column_name: string }>(
      `select column_name from information_schema.columns where table_schema = current_schema() and table_name = 'checkout_order'
          and column_name not in ('id', 'reference', 'processor_reference', 'payment_reference') and is_generated = 'NEVER'`,
    );
    const columns = rows.map((r) => `"${r.column_name}"`).join(', ');
    await client.query(
      `insert into checkout_order (reference, processor_reference, payment_reference, ${columns})
       select $2 || '-' || i, 'PRC' || md5($2 || '-' || i), 'PAY' || md5($2 || '-' || i), ${columns}
         from checkout_order, generate_series(0, $3::int - 1) i where id = $1`,
      [templateId, prefix, count],
    );
  } finally {
    await client.end();
  }
  return Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
}

/** How many of the orders `references` have each status id (the capture's orders are checked Authorized before its rounds). */
async function statusCounts(url: string, references: string[]): Promise<Map<number, number>> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ status_id: number; n: string }>(
      'select status_id, count(*) as n from checkout_order where reference = any($1::text[]) group by status_id',
      [references],
    );
    return new Map(rows.map((r) => [Number(r.status_id), Number(r.n)]));
  } finally {
    await client.end();
  }
}

/**
 * ANALYZE of the bench database, once its setup and warm-ups have written their rows. A server
 * with autovacuum off (as on CI) never gathers statistics: a prepared statement planned while
 * checkout_order was nearly empty then keeps a generic plan that reads the order by
 * (environment_id, status_id) and filters the reference, scanning every order of the
 * environment once the table has grown. With autovacuum on (the default, and in production)
 * the table's first ANALYZE replaces that plan; ANALYZE here does what it would have done.
 */
async function analyzeDatabase(url: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('analyze');
  } finally {
    await client.end();
  }
}

/**
 * The CPU time of every process of a PostgreSQL server on this machine (its backends, of any
 * database, and its background processes), in µs: the running ones' from /proc/<pid>/schedstat,
 * plus what the ones that ended have left in their parent's (the postmaster's) children times
 * (/proc/<pid>/stat cutime and cstime, in clock ticks), so that a backend ending during a round
 * does not take its CPU out of the sum. Undefined when the server is not local or /proc cannot tell.
 * Per request over a round it shows what the database spends beside the service's own CPU (both
 * share the machine's cores).
 */
function postgresCpuUs(databaseUrl: string): number | undefined {
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(new URL(databaseUrl).hostname) || !fs.existsSync('/proc/self/schedstat')) return undefined;
  const processes = new Map<string, { ns: number; ppid: string; childrenTicks: number }>();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
      const ns = Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);
      // The fields after the command's closing parenthesis: state (3), ppid (4), …, cutime (16), cstime (17).
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      processes.set(pid, { ns, ppid: fields[1]!, childrenTicks: Number(fields[13]) + Number(fields[14]) });
    } catch {
      // The process ended meanwhile.
    }
  }
  let us = 0;
  for (const p of processes.values()) {
    us += p.ns / 1000;
    // The postmaster: the one postgres process whose parent is not one.
    if (!processes.has(p.ppid)) us += (p.childrenTicks * 1e6) / CLOCK_TICKS_PER_SECOND;
  }
  return us;
}

/** The kernel's clock ticks per second (USER_HZ), in which /proc/<pid>/stat counts times. */
const CLOCK_TICKS_PER_SECOND = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

interface Measured {
  rates: number[];
  latencies: number[];
  errors: number;
  firstFailure?: string;
  cpuUsPerRequest: number[];
  /** The PostgreSQL server's CPU per request (postgresCpuUs), when it can be told. */
  dbCpuUsPerRequest: number[];
  /** The WAL records the server wrote per request (pg_stat_wal, the whole server's). */
  walRecordsPerRequest: number[];
}

/** The WAL records the server has written since its statistics were reset (pg_stat_wal, PostgreSQL 14 and later). */
async function walRecords(client: InstanceType<typeof Client>): Promise<number> {
  const { rows } = await client.query<{ n: string }>('select wal_records::text as n from pg_stat_wal');
  return Number(rows[0]!.n);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export async function runHotPathsBench(): Promise<BenchSection> {
  const started = Date.now();
  const roundMs = Number(process.env.BENCH_HOT_ROUND_MS ?? 3000);
  const rounds = Math.max(3, Number(process.env.BENCH_HOT_ROUNDS ?? 3));
  // The baselines talk to PostgreSQL with pg: this section needs a server (never the embedded database).
  const databaseUrl = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/pgw_bench_hotpaths';
  await ensureDatabase(databaseUrl);
  const env: Record<string, string> = {
    ...benchDatabaseEnv(),
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'silent',
    SCHEDULER_INTERVAL_MS: '0',
    WEBHOOK_CONCURRENCY: '0',
    RATE_LIMIT: 'off',
    // Passed through for comparisons (TENANT_CACHE_TTL_MS=0: the service without its caches).
    ...(process.env.TENANT_CACHE_TTL_MS ? { TENANT_CACHE_TTL_MS: process.env.TENANT_CACHE_TTL_MS } : {}),
  };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-hot-'));
  env.DATA_DIR = dataDir;

  // Merchants (and the migrations) through the service's own code, then the service in a process of its own.
  const runtime = await openRuntime(loadConfig({ ...env, MIGRATE_ON_START: 'true' }), { migrate: true });
  const stamp = Date.now().toString(36);
  // BENCH_HOT_PATHS=pay,verify: only those pairs (and no allocation run unless create2048 is among them).
  const only = process.env.BENCH_HOT_PATHS?.split(',').map((k) => k.trim());
  let m2048, m4096, environmentId: number, payTemplateId: number, payLinkId: number;
  let captureTemplateId: number | undefined;
  try {
    const merchants = runtime.ctx.services.merchants;
    [m2048, m4096] = await Promise.all([
      merchants.createMerchant({ name: `Bench Hot 2048 ${stamp}`, country: 'NG', supportEmail: 'bench@hot.test', keyBits: 2048 }),
      merchants.createMerchant({ name: `Bench Hot 4096 ${stamp}`, country: 'NG', supportEmail: 'bench@hot.test', keyBits: 4096 }),
    ]);
    environmentId = (await runtime.ctx.services.auth.authenticate(m2048.keys.test.publicKey)).environmentId;
    // The card pays: orders of a multi-charge NOAUTH link (settled in the pay request itself). One is
    // made by the service; the rest are copies of it (below), so that setting up thousands costs seconds.
    const owner = await runtime.ctx.services.auth.authenticate(m2048.keys.test.privateKey);
    /** A NOAUTH multi-charge link and one order made on it by the service: the template the copies are made from. */
    const templateOn = async (name: string, description: string, prefix: string, captureMethod?: 'MANUAL') => {
      const { link } = await runtime.ctx.services.links.create(owner, {
        name,
        description,
        paymentType: 'MC',
        currency: 'NGN',
        authOption: 'NOAUTH',
        ...(captureMethod ? { captureMethod } : {}),
      });
      const { order } = await runtime.ctx.services.orders.create(owner, {
        ...orderPlaintext(`${prefix}-${stamp}`, 0),
        payment: { redirectUrl: 'https://shop.example.test/back', paymentLinkId: link.id },
      });
      return { link, order };
    };
    const pay = await templateOn('Bench pay', 'Bench NOAUTH link', 'PT');
    payTemplateId = pay.order.id;
    payLinkId = pay.link.id;
    // The captures: orders of a NOAUTH link with captureMethod MANUAL, whose approved card pay leaves
    // them Authorized (the money held). Again one made by the service, the rest copies of it.
    if (!only || only.includes('capture')) {
      const { order: captureTemplate } = await templateOn('Bench capture', 'Bench NOAUTH MANUAL link', 'CT', 'MANUAL');
      if (captureTemplate.captureMethod !== 'MANUAL') throw new Error(`bench: the capture's template order is ${captureTemplate.captureMethod}`);
      captureTemplateId = captureTemplate.id;
    }
  } finally {
    await runtime.close();
  }
  const [base2048, base4096] = await Promise.all([generateRsaKeyMaterial(2048), generateRsaKeyMaterial(4096)]);

  const servicePort = await freePort();
  const service = ipc('hot-service.js');
  const baseline = ipc('baselines/irreducible-server.js');
  const lines: string[] = [];
  const rows: BenchRow[] = [];
  // The variant's own processes (create2048-redis), stopped with the others.
  const extraServices: Ipc[] = [];
  let redis: BenchRedis | undefined;
  try {
    const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10);
    await service.call({
      cmd: 'start',
      env: { ...env, PORT: String(servicePort), PUBLIC_URL: `http://127.0.0.1:${servicePort}`, DATABASE_POOL_SIZE: String(poolSize) },
    });
    const { port: basePort } = await baseline.call<{ port: number }>({
      cmd: 'start',
      setup: { databaseUrl, poolSize, privateKey2048: base2048.privateKeyPem, privateKey4096: base4096.privateKeyPem, environmentId },
    });
    const serviceBase = `http://127.0.0.1:${servicePort}`;
    const svc = `${serviceBase}/checkout/order`;
    const base = `http://127.0.0.1:${basePort}`;

    // Warm-up of both (JIT, pools, caches) and the orders verify and status read.
    const warmCount = 200;
    const warm = await load({
      url: `${svc}/create`,
      apiKey: m2048.keys.test.publicKey,
      kind: 'create',
      encryptionKey: m2048.keys.test.encryptionKey,
      referencePrefix: `W-${stamp}`,
      count: warmCount,
      concurrency: CONCURRENCY,
      durationMs: 60_000,
    });
    if (warm.ok < warmCount) throw new Error(`bench: warm-up failed: ${warm.firstFailure}`);
    const references = Array.from({ length: warmCount }, (_, i) => `W-${stamp}-${i}`);
    await Promise.all([
      load({
        url: `${svc}/create`,
        apiKey: m4096.keys.test.publicKey,
        kind: 'create',
        encryptionKey: m4096.keys.test.encryptionKey,
        referencePrefix: `W4-${stamp}`,
        count: 64,
        concurrency: CONCURRENCY,
        durationMs: 60_000,
      }),
      load({
        url: `${base}/create2048`,
        kind: 'create',
        encryptionKey: base2048.encryptionKey,
        referencePrefix: `W-${stamp}`,
        count: warmCount,
        concurrency: CONCURRENCY,
        durationMs: 60_000,
      }),
    ]);
    await Promise.all([
      load({
        url: `${base}/create4096`,
        kind: 'create',
        encryptionKey: base4096.encryptionKey,
        referencePrefix: `W4-${stamp}`,
        count: 64,
        concurrency: CONCURRENCY,
        durationMs: 60_000,
      }),
      load({
        url: `${svc}/verify`,
        apiKey: m2048.keys.test.privateKey,
        kind: 'verify',
        references,
        count: warmCount,
        concurrency: CONCURRENCY,
        durationMs: 60_000,
      }),
    ]);

    interface Case {
      key: string;
      target: 'service' | 'baseline';
      /** The process whose CPU time is measured, when not the target's own (the pay's baseline is the service's order create). */
      proc?: 'service' | 'baseline' | Ipc;
      request: (round: number) => LoadRequest;
    }
    const perSecond = {
      create2048: 4000,
      create4096: 1200,
      verify: 8000,
      status: 6000,
      pay: 1500,
      refund: 1500,
      capture: CAPTURES_PER_SECOND,
      createlink: 3000,
      'create2048-redis': 4000,
    };
    const count = (path: keyof typeof perSecond) => Math.ceil((roundMs / 1000) * perSecond[path]);
    const cases: Array<[Case, Case]> = [
      [
        {
          key: 'create2048',
          target: 'service',
          request: (r) => ({
            url: `${svc}/create`,
            apiKey: m2048.keys.test.publicKey,
            kind: 'create',
            encryptionKey: m2048.keys.test.encryptionKey,
            referencePrefix: `C-${stamp}-${r}`,
            count: count('create2048'),
            concurrency: CONCURRENCY,
            durationMs: roundMs,
          }),
        },
        {
          key: 'create2048',
          target: 'baseline',
          request: (r) => ({
            url: `${base}/create2048`,
            kind: 'create',
            encryptionKey: base2048.encryptionKey,
            referencePrefix: `C-${stamp}-${r}`,
            count: count('create2048'),
            concurrency: CONCURRENCY,
            durationMs: roundMs,
          }),
        },
      ],
      [
        {
          key: 'create4096',
          target: 'service',
          request: (r) => ({
            url: `${svc}/create`,
            apiKey: m4096.keys.test.publicKey,
            kind: 'create',
            encryptionKey: m4096.keys.test.encryptionKey,
            referencePrefix: `D-${stamp}-${r}`,
            count: count('create4096'),
            concurrency: CONCURRENCY,
            durationMs: roundMs,
          }),
        },
        {
          key: 'create4096',
          target: 'baseline',
          request: (r) => ({
            url: `${base}/create4096`,
            kind: 'create',
            encryptionKey: base4096.encryptionKey,
            referencePrefix: `D-${stamp}-${r}`,
            count: count('create4096'),
            concurrency: CONCURRENCY,
            durationMs: roundMs,
          }),
        },
      ],
      [
        {
          key: 'verify',
          target: 'service',
          request: () => ({
            url: `${svc}/verify`,
            apiKey: m2048.keys.test.privateKey,
            kind: 'verify',
            references,
            count: count('verify'),
            concurrency: CONCURRENCY,
            durationMs: roundMs,
          }),
        },
        {
          key: 'verify',
          target: 'baseline',
          request: () => ({ url: `${base}/verify`, kind: 'verify', references, count: count('verify'), concurrency: CONCURRENCY, durationMs: roundMs }),
        },
      ],
      [
        {
          key: 'status',
          target: 'service',
          request: () => ({
            url: `${svc}/status`,
            apiKey: m2048.keys.test.publicKey,
            kind: 'status',
            encryptionKey: m2048.keys.test.encryptionKey,
            references,
            count: count('status'),
            concurrency: CONCURRENCY,
            durationMs: roundMs,
          }),
        },
        {
          key: 'status',
          target: 'baseline',
          request: () => ({
            url: `${base}/status`,
            kind: 'status',
            encryptionKey: base2048.encryptionKey,
            references,
            count: count('status'),
            concurrency: CONCURRENCY,
            durationMs: roundMs,
          }),
        },
      ],
    ];

    // The service's own 2048-bit order create (on a link when `paymentLinkId`): the baseline of the pay, refund and capture pairs.
    const serviceCreate = (key: 'createlink' | 'create2048', prefix: string, paymentLinkId?: number) => (r: number) => ({
      url: `${svc}/create`,
      apiKey: m2048.keys.test.publicKey,
      kind: 'create' as const,
      encryptionKey: m2048.keys.test.encryptionKey,
      referencePrefix: `${prefix}-${stamp}-${r}`,
      paymentLinkId,
      count: count(key),
      concurrency: CONCURRENCY,
      durationMs: roundMs,
    });
    // The card pay on a NOAUTH link against the service's own order create, in the same rounds: one
    // request each, both decrypting a 2048-bit payload; the pay also calls the sandbox processor and settles.
    const payOrders = await copyOrders(databaseUrl, payTemplateId, `P-${stamp}`, count('pay') * rounds);
    await load({
      url: `${svc}/pay`,
      apiKey: m2048.keys.test.publicKey,
      kind: 'pay',
      encryptionKey: m2048.keys.test.encryptionKey,
      references: await copyOrders(databaseUrl, payTemplateId, `PW-${stamp}`, 100),
      count: 100,
      concurrency: CONCURRENCY,
      durationMs: 60_000,
    });
    cases.push([
      {
        key: 'pay',
        target: 'service',
        request: (r) => ({
          url: `${svc}/pay`,
          apiKey: m2048.keys.test.publicKey,
          kind: 'pay',
          encryptionKey: m2048.keys.test.encryptionKey,
          references: payOrders.slice(r * count('pay'), (r + 1) * count('pay')),
          count: count('pay'),
          concurrency: CONCURRENCY,
          durationMs: roundMs,
        }),
      },
      {
        key: 'pay',
        target: 'baseline',
        proc: 'service',
        request: serviceCreate('create2048', 'PC'),
      },
    ]);
    // An order create on a payment link (the pay's NOAUTH link) against the plain create, both the service's, in the same rounds.
    cases.push([
      { key: 'createlink', target: 'service', request: serviceCreate('createlink', 'CL', payLinkId) },
      { key: 'createlink', target: 'baseline', proc: 'service', request: serviceCreate('create2048', 'CP') },
    ]);
    // The refund (GraphQL refundOrder of 1, private key) against the service's own order create, in the
    // same rounds. Its orders are paid here, whatever else is selected (the pay pair's orders are paid
    // only during its rounds): copies of the pay's template, each paid once by the service. Requests
    // take the orders in turn, so the 32 in flight hold 32 different orders' row locks rather than
    // queueing on one; each order's amount covers every refund of 1 it is given.
    if (!only || only.includes('refund')) {
      const warmRefunds = 200;
      const perOrder = Math.floor(orderPlaintext('', 0).order.amount / 2);
      const needed = count('refund') * rounds + warmRefunds;
      const refundOrderCount = Math.max(1024, Math.ceil(needed / perOrder));
      const refundOrders = await copyOrders(databaseUrl, payTemplateId, `RF-${stamp}`, refundOrderCount);
      const paid = await load({
        url: `${svc}/pay`,
        apiKey: m2048.keys.test.publicKey,
        kind: 'pay',
        encryptionKey: m2048.keys.test.encryptionKey,
        references: refundOrders,
        count: refundOrderCount,
        concurrency: CONCURRENCY,
        durationMs: 120_000,
      });
      if (paid.ok < refundOrderCount) throw new Error(`bench: paying the refund's orders failed: ${paid.firstFailure}`);
      const refundRequest = (n: number, durationMs: number): LoadRequest => ({
        url: `${serviceBase}/graphql`,
        apiKey: m2048.keys.test.privateKey,
        kind: 'refund',
        references: refundOrders,
        count: n,
        concurrency: CONCURRENCY,
        durationMs,
      });
      const warmed = await load(refundRequest(warmRefunds, 60_000));
      if (warmed.ok < warmRefunds) throw new Error(`bench: refund warm-up failed: ${warmed.firstFailure}`);
      cases.push([
        { key: 'refund', target: 'service', request: () => refundRequest(count('refund'), roundMs) },
        {
          key: 'refund',
          target: 'baseline',
          proc: 'service',
          request: serviceCreate('create2048', 'RC'),
        },
      ]);
    }

    // The capture (GraphQL captureOrder of all that was authorized, private key) against the service's
    // own order create, in the same rounds. An order is captured once: exactly as many Authorized
    // orders as the rounds and the warm-up take (copies of the MANUAL link’s template, paid by two service
    // processes of their own, checked Authorized), each request a different order, each round its own slice.
    let captureSetup: string | undefined;
    if (captureTemplateId !== undefined) {
      const warmCaptures = 100;
      const perRound = count('capture');
      const captureOrders = await copyOrders(databaseUrl, captureTemplateId, `CA-${stamp}`, perRound * rounds + warmCaptures);
      // Paid by two service processes of their own (one per core: a MANUAL order's pay costs about
      // 30 ms of CPU), stopped before the rounds: its settlement still goes through the unit of work,
      // whose first flush would turn on the AsyncLocalStorage promise hooks of the measured process
      // for good (NOTES.md, "Events").
      const payers = [ipc('hot-service.js'), ipc('hot-service.js')];
      const payStarted = Date.now();
      let paidOk = 0;
      let payFailure: string | undefined;
      let payCpuUs = 0;
      try {
        await Promise.all(
          payers.map(async (payer, i) => {
            const port = await freePort();
            await payer.call({
              cmd: 'start',
              env: { ...env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, DATABASE_POOL_SIZE: String(poolSize) },
            });
            const before = await payer.call<{ cpuUs: number }>({ cmd: 'stats' });
            const mine = captureOrders.filter((_, j) => j % payers.length === i);
            const paid = await load({
              url: `http://127.0.0.1:${port}/checkout/order/pay`,
              apiKey: m2048.keys.test.publicKey,
              kind: 'pay',
              encryptionKey: m2048.keys.test.encryptionKey,
              references: mine,
              count: mine.length,
              concurrency: CONCURRENCY / payers.length,
              durationMs: 300_000,
            });
            payCpuUs += (await payer.call<{ cpuUs: number }>({ cmd: 'stats' })).cpuUs - before.cpuUs;
            paidOk += paid.ok;
            payFailure ??= paid.firstFailure;
          }),
        );
      } finally {
        for (const payer of payers) {
          await payer.call({ cmd: 'exit' }).catch(() => undefined);
          payer.child.kill('SIGKILL');
        }
      }
      if (paidOk < captureOrders.length) throw new Error(`bench: paying the capture's orders failed: ${paidOk} of ${captureOrders.length} paid, ${payFailure}`);
      captureSetup = `  capture setup: ${captureOrders.length} orders of a MANUAL link paid in ${((Date.now() - payStarted) / 1000).toFixed(0)} s by two service processes of their own (${(payCpuUs / 1000 / captureOrders.length).toFixed(1)} ms CPU per pay)`;
      const statuses = await statusCounts(databaseUrl, captureOrders);
      if (statuses.get(OrderStatus.Authorized) !== captureOrders.length)
        throw new Error(`bench: the capture's orders are not all Authorized: ${JSON.stringify(Object.fromEntries(statuses))} (status id: orders)`);
      const captureRequest = (references: string[], durationMs: number): LoadRequest => ({
        url: `${serviceBase}/graphql`,
        apiKey: m2048.keys.test.privateKey,
        kind: 'capture',
        references,
        count: references.length,
        concurrency: CONCURRENCY,
        durationMs,
      });
      const warmed = await load(captureRequest(captureOrders.slice(perRound * rounds), 60_000));
      if (warmed.ok < warmCaptures) throw new Error(`bench: capture warm-up failed: ${warmed.firstFailure}`);
      cases.push([
        { key: 'capture', target: 'service', request: (r) => captureRequest(captureOrders.slice(r * perRound, (r + 1) * perRound), roundMs) },
        {
          key: 'capture',
          target: 'baseline',
          proc: 'service',
          request: serviceCreate('create2048', 'CC'),
        },
      ]);
    }

    // create2048-redis (only when named): the same 2048-bit create on two more service processes with
    // the rate limits on (as deployed), one counting in a redis-server of the bench's own (REDIS_URL),
    // the other in memory; the one without Redis is the baseline of the pair.
    if (only?.includes('create2048-redis')) {
      const program = redisServerProgram();
      if (program === undefined) {
        lines.push('  create2048-redis: skipped: no redis-server (or valkey-server) on PATH');
      } else {
        redis = await startBenchRedis(program);
        const limited = { ...env, RATE_LIMIT: 'true', RATE_LIMIT_PER_KEY: '10000000', RATE_LIMIT_PER_IP: '10000000' };
        const started = await Promise.all(
          [{ REDIS_URL: redis.url }, {}].map(async (extra) => {
            const port = await freePort();
            const proc = ipc('hot-service.js');
            extraServices.push(proc);
            await proc.call({
              cmd: 'start',
              env: { ...limited, ...extra, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, DATABASE_POOL_SIZE: String(poolSize) },
            });
            return { proc, url: `http://127.0.0.1:${port}/checkout/order/create` };
          }),
        );
        const [withRedis, withoutRedis] = started as [{ proc: Ipc; url: string }, { proc: Ipc; url: string }];
        const createOn = (url: string, prefix: string, n: number, durationMs: number): LoadRequest => ({
          url,
          apiKey: m2048.keys.test.publicKey,
          kind: 'create',
          encryptionKey: m2048.keys.test.encryptionKey,
          referencePrefix: `${prefix}-${stamp}`,
          count: n,
          concurrency: CONCURRENCY,
          durationMs,
        });
        for (const [side, prefix] of [
          [withRedis, 'WR'],
          [withoutRedis, 'WM'],
        ] as const) {
          const warmed = await load(createOn(side.url, prefix, warmCount, 60_000));
          if (warmed.ok < warmCount) throw new Error(`bench: create2048-redis warm-up failed: ${warmed.firstFailure}`);
        }
        cases.push([
          { key: 'create2048-redis', target: 'service', proc: withRedis.proc, request: (r) => createOn(withRedis.url, `R${r}`, count('create2048'), roundMs) },
          {
            key: 'create2048-redis',
            target: 'baseline',
            proc: withoutRedis.proc,
            request: (r) => createOn(withoutRedis.url, `RM${r}`, count('create2048'), roundMs),
          },
        ]);
      }
    }
    const chosen = only ? cases.filter(([c]) => only.includes(c.key)) : cases;
    // The statements prepared during the warm-ups are planned again with real statistics (see analyzeDatabase).
    await analyzeDatabase(databaseUrl);
    const measuredKey = (key: string) => chosen.some(([c]) => c.key === key);

    const profileDir = process.env.BENCH_HOT_PROFILE ? path.resolve(process.env.BENCH_HOT_PROFILE) : undefined;
    const results = new Map<string, Measured>();
    let peakRss = 0;
    const walClient = new Client({ connectionString: databaseUrl });
    await walClient.connect();
    const measure = async (c: Case, round: number) => {
      const proc = typeof c.proc === 'object' ? c.proc : (c.proc ?? c.target) === 'service' ? service : baseline;
      const gen = ipc('order-load.js');
      try {
        await gen.call(c.request(round));
        // BENCH_HOT_PROFILE=<dir>: a CPU profile of the service over each of its measured rounds (profile-start/stop of hot-service.ts).
        const profiling = profileDir !== undefined && proc === service;
        if (profiling) await service.call({ cmd: 'profile-start' });
        const before = await proc.call<{ cpuUs: number }>({ cmd: 'stats' });
        const dbBefore = postgresCpuUs(databaseUrl);
        const walBefore = await walRecords(walClient);
        let sampling = true;
        const sampler = (async () => {
          while (sampling && proc === service) {
            const s = await service.call<{ rss: number }>({ cmd: 'stats' });
            peakRss = Math.max(peakRss, s.rss);
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
        })();
        const r = await gen.call<LoadResult>({ go: true });
        sampling = false;
        await sampler;
        const dbAfter = postgresCpuUs(databaseUrl);
        const walAfter = await walRecords(walClient);
        const after = await proc.call<{ cpuUs: number }>({ cmd: 'stats' });
        const id = `${c.key} ${c.target}`;
        if (profiling) {
          const { profile } = await service.call<{ profile: unknown }>({ cmd: 'profile-stop' });
          fs.mkdirSync(profileDir, { recursive: true });
          fs.writeFileSync(path.join(profileDir, `${c.key}-${c.target}-${round + 1}.cpuprofile`), JSON.stringify(profile));
        }
        const m = results.get(id) ?? { rates: [], latencies: [], errors: 0, cpuUsPerRequest: [], dbCpuUsPerRequest: [], walRecordsPerRequest: [] };
        // A round that ran out of prepared requests is measured over the time all its connections
        // were busy (see LoadResult.fullMs), not over the tail that followed with fewer in flight.
        m.rates.push(r.ranOut ? (r.okWhileFull! * 1000) / Math.max(1, r.fullMs!) : (r.ok * 1000) / r.elapsedMs);
        for (const l of r.latenciesMs) m.latencies.push(l);
        m.errors += r.failed;
        m.firstFailure ??= r.firstFailure;
        m.cpuUsPerRequest.push((after.cpuUs - before.cpuUs) / Math.max(1, r.ok + r.failed));
        if (dbBefore !== undefined && dbAfter !== undefined) m.dbCpuUsPerRequest.push((dbAfter - dbBefore) / Math.max(1, r.ok + r.failed));
        m.walRecordsPerRequest.push((walAfter - walBefore) / Math.max(1, r.ok + r.failed));
        if (r.ranOut)
          lines.push(
            `  note: ${id} round ${round + 1} used up its ${count(c.key as keyof typeof perSecond)} prepared requests after ${fmt(r.fullMs!)} of ${roundMs} ms: ` +
              `its rate is taken over those ${fmt(r.fullMs!)} ms (${r.okWhileFull} answered), with ${CONCURRENCY} in flight throughout`,
          );
        results.set(id, m);
      } finally {
        gen.child.kill();
      }
    };
    try {
      for (let round = 0; round < rounds; round += 1) {
        for (const pair of chosen) {
          const order = round % 2 === 0 ? pair : ([pair[1], pair[0]] as const);
          for (const c of order) await measure(c, round);
        }
      }
    } finally {
      await walClient.end();
    }

    // Allocation per order create: a separate run with the sampling heap profiler on.
    const allocMs = 3000;
    let allocPerRequest = Number.NaN;
    let allocRequests = 0;
    if (measuredKey('create2048')) {
      const allocCount = Number(process.env.BENCH_HOT_ALLOC_REQUESTS ?? 6000);
      const allocGen = ipc('order-load.js');
      try {
        await allocGen.call({
          url: `${svc}/create`,
          apiKey: m2048.keys.test.publicKey,
          kind: 'create',
          encryptionKey: m2048.keys.test.encryptionKey,
          referencePrefix: `A-${stamp}`,
          count: allocCount,
          concurrency: CONCURRENCY,
          durationMs: allocMs,
        });
        await service.call({ cmd: 'alloc-start' });
        const r = await allocGen.call<LoadResult>({ go: true });
        const { bytes } = await service.call<{ bytes: number }>({ cmd: 'alloc-stop' });
        allocPerRequest = bytes / Math.max(1, r.ok);
        allocRequests = r.ok;
      } finally {
        allocGen.child.kill();
      }
    }
    const finalStats = await service.call<{ rss: number }>({ cmd: 'stats' });
    peakRss = Math.max(peakRss, finalStats.rss);

    const median = (id: string) => percentile(results.get(id)!.rates, 50);
    const p99 = (id: string) => percentile(results.get(id)!.latencies, 99);
    const cpu = (id: string) => percentile(results.get(id)!.cpuUsPerRequest, 50) / 1000;
    const dbCpu = (id: string) =>
      results.get(id)!.dbCpuUsPerRequest.length ? `, ${(percentile(results.get(id)!.dbCpuUsPerRequest, 50) / 1000).toFixed(2)} ms PostgreSQL CPU/req` : '';
    const wal = (id: string) => `, ${percentile(results.get(id)!.walRecordsPerRequest, 50).toFixed(1)} WAL records/req`;
    const describe = (id: string) =>
      `${fmt(median(id))} req/s, p99 ${p99(id).toFixed(1)} ms, ${cpu(id).toFixed(2)} ms CPU/req${dbCpu(id)}${wal(id)}, ${results.get(id)!.errors} errors`;
    lines.push(
      `REST hot paths, ${CONCURRENCY} connections from another process, ${rounds} interleaved rounds of ${roundMs} ms, PostgreSQL server; ` +
        `service ${os.availableParallelism()} cores, DATABASE_POOL_SIZE ${poolSize}, RATE_LIMIT=off; baselines: bare node:http + pg (bench/baselines/irreducible-server.ts)`,
    );
    const row = (key: string, label: string, target: string, meets: (ratio: number) => boolean, note?: string) => {
      if (!measuredKey(key)) return;
      const s = `${key} service`;
      const b = `${key} baseline`;
      const ratio = median(s) / median(b);
      const met = meets(ratio) && results.get(s)!.errors === 0;
      lines.push(
        `  ${label}: service ${describe(s)}; baseline ${describe(b)}; ratio ${ratio.toFixed(2)}x${results.get(s)!.firstFailure ? ` (first failure: ${results.get(s)!.firstFailure})` : ''}`,
      );
      rows.push({
        path: label,
        target,
        service: `${fmt(median(s))} req/s, p99 ${p99(s).toFixed(1)} ms, ${results.get(s)!.errors} errors`,
        baseline: `${fmt(median(b))} req/s, p99 ${p99(b).toFixed(1)} ms`,
        ratio,
        met,
        note,
        data: {
          service: { rates: results.get(s)!.rates, p99: p99(s), cpuMsPerRequest: cpu(s), errors: results.get(s)!.errors },
          baseline: { rates: results.get(b)!.rates, p99: p99(b), cpuMsPerRequest: cpu(b) },
        },
      });
    };
    row(
      'create2048',
      'order create, 2048-bit',
      "≥ 0.8× baseline, p99 ≤ 1.3× baseline's, 0 errors",
      (r) => r >= 0.8 && p99('create2048 service') <= 1.3 * p99('create2048 baseline'),
    );
    row('create4096', 'order create, 4096-bit', `≥ 0.9× a baseline decrypting on every core (${os.availableParallelism()} worker threads)`, (r) => r >= 0.9);
    row('verify', 'order verify', '≥ 0.6× one SELECT', (r) => r >= 0.6);
    row(
      'create2048-redis',
      'order create, 2048-bit, REDIS_URL (baseline: the same without Redis)',
      '≥ 0.9× the same service counting its rate limits in memory',
      (r) => r >= 0.9,
      'both with the rate limits on (per-key limit raised so that none refuses); the baseline is the service without REDIS_URL',
    );
    row('status', 'order status (encrypted)', '≥ 0.6× decrypt + one SELECT', (r) => r >= 0.6);
    row(
      'pay',
      'card pay, NOAUTH link (baseline: the service’s order create)',
      '≥ 0.5× order create of the same run',
      (r) => r >= 0.5,
      'one request: decrypt, sandbox processor, settlement and outbox; the baseline is the service’s own 2048-bit order create',
    );
    row(
      'refund',
      'refund, GraphQL refundOrder (baseline: the service’s order create)',
      '≥ 0.5× order create of the same run',
      (r) => r >= 0.5,
      'a partial refund of 1 of a paid order: the order locked, the refund recorded, the sandbox processor, the settlement and outbox; the baseline is the service’s own 2048-bit order create',
    );
    row(
      'capture',
      'capture, GraphQL captureOrder (baseline: the service’s order create)',
      '≥ 0.5× order create of the same run',
      (r) => r >= 0.5,
      'a capture of all that was authorized of an Authorized order (MANUAL link): the order and its authorization claimed, the sandbox processor, the settlement and outbox; the baseline is the service’s own 2048-bit order create',
    );
    if (captureSetup && measuredKey('capture')) lines.push(captureSetup);
    row(
      'createlink',
      'order create on a payment link (baseline: the service’s plain order create)',
      '≥ 0.9× the plain create of the same run (as fast, within this machine’s spread)',
      (r) => r >= 0.9,
      'the link is read and checked (active, its rules) before the order is written; the baseline is the service’s own 2048-bit plain create',
    );
    const rssMiB = peakRss / 1024 / 1024;
    const allocKiB = allocPerRequest / 1024;
    if (measuredKey('create2048')) {
      lines.push(
        `  memory: service peak RSS ${rssMiB.toFixed(0)} MiB at ${CONCURRENCY} connections; JS heap allocated per order create ${allocKiB.toFixed(1)} KiB (sampling heap profiler, ${allocRequests} creates over ${allocMs} ms)`,
      );
      rows.push({
        path: 'memory',
        target: 'RSS < 300 MiB at 32 connections; < 100 KiB allocated per order create',
        service: `RSS ${rssMiB.toFixed(0)} MiB; ${allocKiB.toFixed(1)} KiB per create`,
        met: rssMiB < 300 && allocKiB < 100,
        note: 'allocation: V8 sampling heap profiler (objects later collected included) over a run of creates; JS heap only',
        data: { peakRssBytes: peakRss, allocBytesPerCreate: allocPerRequest },
      });
    }
    lines.push(`  load average (1 min) at the end: ${os.loadavg()[0]!.toFixed(1)}; section took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    await service.call({ cmd: 'exit' }).catch(() => undefined);
    service.child.kill('SIGKILL');
    baseline.child.kill('SIGKILL');
    for (const proc of extraServices) {
      await proc.call({ cmd: 'exit' }).catch(() => undefined);
      proc.child.kill('SIGKILL');
    }
    await redis?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return {
    name: 'REST hot paths: order create, verify and status against their irreducible baselines; card pay, refund and capture against order create',
    lines,
    rows,
  };
}
