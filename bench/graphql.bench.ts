import 'reflect-metadata';
import { fork } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Pool } from 'pg';
import { loadConfig } from '../src/config';
import { createService, type Service } from '../src/bootstrap';
import { EXACT_COUNT_BOUND } from '../src/db/sql';
import { ORDER_COLUMNS } from '../src/orders/order-lists';
import { LINK_COLUMNS } from '../src/links/link-row';
import { benchDatabaseEnv, freePort } from './bench-env';
import type { GraphqlLoadRequest, GraphqlLoadResult } from './graphql-load';
import type { BenchRow, BenchSection } from './report';

/**
 * GraphQL list throughput: `paymentLinks(first:50)` and `orders(first:50)` (with totalCount,
 * as a dashboard asks) at 32 connections, against a baseline in the same run: a minimal
 * node:http server running the same SELECTs with `pg` and serialising the same fields.
 * Rounds interleave service and baseline so that the machine's other load hits both alike.
 */
const CONCURRENCY = 32;
const ROUNDS = 3;
const ISSUE_RATE = 139; // req/s of paymentLinks(first:50) when issue 12 was filed
const TARGET_RATE = 4 * ISSUE_RATE;
const TARGET_P99_MS = 60;
const ROWS = 1000;

const LINKS_QUERY = `{ paymentLinks(first: 50) { totalCount edges { cursor node { id name reference amount currency isActive paymentLinkUrl paymentLinkCode dateCreated } } pageInfo { hasNextPage endCursor } } }`;
const ORDERS_QUERY = `{ orders(first: 50) { totalCount edges { cursor node { orderReference amount currencyName status paymentMethod dateCreated customer { emailAddress } } } pageInfo { hasNextPage endCursor } } }`;

const STATUS_NAMES: Record<number, string> = { 1: 'Initiated', 2: 'pending authentication', 3: 'Processing', 4: 'Failed', 5: 'Successful' };
const cursorOf = (createdAt: Date, id: number) => Buffer.from(JSON.stringify([createdAt.toISOString(), id])).toString('base64url');

/** The baseline: the same statements, straight on `pg`, the answer built with JSON.stringify. */
function baselineServer(pool: Pool, env: number, publicUrl: string): http.Server {
  const count = async (from: string) =>
    Number((await pool.query(`select count(*)::int as n from (select 1 from ${from} limit ${EXACT_COUNT_BOUND + 1}) s`, [env])).rows[0].n);
  const page = <T>(rows: T[], edge: (r: T) => { cursor: string; node: unknown }) => {
    const edges = rows.slice(0, 50).map(edge);
    return { edges, pageInfo: { hasNextPage: rows.length > 50, endCursor: edges[edges.length - 1]?.cursor ?? null } };
  };
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      try {
        let data: unknown;
        if (req.url === '/links') {
          const [rows, totalCount] = await Promise.all([
            pool.query(
              `select ${LINK_COLUMNS} from payment_link l join payment_link_type t on t.id = l.type_id where l.environment_id = $1 order by l.date_created desc, l.id desc limit 51`,
              [env],
            ),
            count('payment_link l where l.environment_id = $1'),
          ]);
          data = {
            paymentLinks: {
              totalCount,
              ...page(rows.rows, (r) => ({
                cursor: cursorOf(r.date_created, r.id),
                node: {
                  id: r.id,
                  name: r.name,
                  reference: r.reference,
                  amount: r.amount === null ? null : Number(r.amount).toFixed(2),
                  currency: r.currency,
                  isActive: r.is_active,
                  paymentLinkUrl: `${publicUrl}/pay/${r.reference}`,
                  paymentLinkCode: r.t_code,
                  dateCreated: r.date_created.toISOString(),
                },
              })),
            },
          };
        } else {
          const [rows, totalCount] = await Promise.all([
            pool.query(
              `select ${ORDER_COLUMNS} from (select o.id, o.created_at from checkout_order o where o.environment_id = $1 order by o.created_at desc, o.id desc limit 51) p
                 join checkout_order o on o.id = p.id left join customer c on c.id = o.customer_id left join payment_link l on l.id = o.payment_link_id
                 left join payment_link_type t on t.id = l.type_id order by o.created_at desc, o.id desc`,
              [env],
            ),
            count('checkout_order o where o.environment_id = $1'),
          ]);
          data = {
            orders: {
              totalCount,
              ...page(rows.rows, (r) => ({
                cursor: cursorOf(r.created_at, r.id),
                node: {
                  orderReference: r.reference,
                  amount: Number(r.amount).toFixed(2),
                  currencyName: r.currency,
                  status: STATUS_NAMES[r.status_id],
                  paymentMethod: r.payment_method ?? '',
                  dateCreated: r.created_at.toISOString(),
                  customer: { emailAddress: r.customer_email },
                },
              })),
            },
          };
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
      } catch (err) {
        res.writeHead(500).end(JSON.stringify({ errors: [{ message: String(err) }] }));
      }
    });
  });
}

async function load(req: GraphqlLoadRequest): Promise<GraphqlLoadResult> {
  const child = fork(path.join(__dirname, 'graphql-load.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`bench: the load generator exited with ${code}`))));
  const next = () => Promise.race([new Promise<unknown>((resolve) => child.once('message', resolve)), exited]);
  const ready = next();
  child.send(req);
  await ready;
  const result = next();
  child.send('go');
  return (await result) as GraphqlLoadResult;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * (sorted.length - 1)))] ?? Number.NaN;
}
const median = (values: number[]) => percentile(values, 50);

export async function runGraphqlBench(): Promise<BenchSection> {
  const roundMs = Number(process.env.BENCH_GRAPHQL_ROUND_MS ?? 4000);
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-graphql-'));
  const publicUrl = `http://127.0.0.1:${port}`;
  let service: Service | undefined;
  let pool: Pool | undefined;
  let baseline: http.Server | undefined;
  const lines: string[] = [];
  const rows: BenchRow[] = [];
  try {
    service = await createService(
      loadConfig({
        ...benchDatabaseEnv(),
        DATA_DIR: dataDir,
        PORT: String(port),
        PUBLIC_URL: publicUrl,
        LOG_LEVEL: 'silent',
        SCHEDULER_INTERVAL_MS: '0',
        WEBHOOK_CONCURRENCY: '0',
        RATE_LIMIT: 'off',
      }),
      { logger: false },
    );
    await service.app.listen({ port, host: '127.0.0.1' });
    const ctx = service.runtime.ctx;
    const created = await ctx.services.merchants.createMerchant({ name: 'Bench GraphQL', country: 'NG', supportEmail: 'bench@graphql.test', keyBits: 2048 });
    const key = created.keys.test.privateKey;
    const env = (await ctx.services.auth.authenticate(key)).environmentId;
    const sql = (text: string, params: unknown[]) => ctx.orm.em.getConnection().execute(text, params);
    await sql(
      `insert into payment_link (environment_id, type_id, name, description, reference, amount, currency, date_created, date_updated)
       select ?::int, case when g % 3 = 0 then 1 when g % 3 = 1 then 2 else 5 end, 'Link ' || g, 'Bench link', 'PLGQ' || ?::int || 'X' || g,
              case when g % 4 = 0 then null else (1000 + g)::numeric(20,4) end, 'NGN', now() - g * interval '1 minute', now() - g * interval '1 minute'
         from generate_series(1, ${ROWS}) g`,
      [env, env],
    );
    await sql(
      `insert into checkout_order (environment_id, reference, processor_reference, payment_reference, customer_email, customer_first_name, customer_last_name,
          customer_mobile, customer_country, amount, currency, fee, total_charged_amount, status_id, narration, redirect_url, payment_method, created_at, updated_at, version)
       select ?::int, 'GQ-' || g, 'PGWGQ' || ?::int || 'X' || g, 'PAYGQ' || ?::int || 'X' || g, 'cust' || (g % 100) || '@example.test', 'Ada', 'Obi', '+2348012345678', 'NG',
              (100 + g)::numeric(20,4), 'NGN', 1.5, (100 + g)::numeric(20,4), case when g % 5 = 0 then 4 else 5 end, 'Bench order', 'https://shop.example.test/back',
              case when g % 7 = 0 then 'PAYPAL' else 'C' end, now() - g * interval '1 minute', now() - g * interval '1 minute', 1
         from generate_series(1, ${ROWS}) g`,
      [env, env, env],
    );
    await sql('analyze payment_link', []);
    await sql('analyze checkout_order', []);

    const databaseUrl = service.runtime.ctx.config.databaseUrl;
    if (!databaseUrl) throw new Error('bench: the GraphQL baseline needs a PostgreSQL URL (BENCH_DATABASE_URL)');
    pool = new Pool({ connectionString: databaseUrl, max: ctx.config.databasePoolSize });
    baseline = baselineServer(pool, env, publicUrl);
    await new Promise<void>((resolve) => baseline!.listen(0, '127.0.0.1', resolve));
    const baselineUrl = `http://127.0.0.1:${(baseline.address() as { port: number }).port}`;

    const targets = [
      {
        path: 'paymentLinks(first:50)',
        service: { url: `${publicUrl}/graphql`, body: JSON.stringify({ query: LINKS_QUERY }) },
        baseline: { url: `${baselineUrl}/links`, body: '{}' },
      },
      {
        path: 'orders(first:50)',
        service: { url: `${publicUrl}/graphql`, body: JSON.stringify({ query: ORDERS_QUERY }) },
        baseline: { url: `${baselineUrl}/orders`, body: '{}' },
      },
    ];
    const rates = new Map<string, number[]>();
    const latencies = new Map<string, number[]>();
    const cpu = new Map<string, number[]>();
    const note = (k: string, r: GraphqlLoadResult, cpuMs: number) => {
      if (r.failed > 0) throw new Error(`bench: ${k}: ${r.failed} failed: ${r.firstFailure}`);
      rates.set(k, [...(rates.get(k) ?? []), (r.ok * 1000) / r.elapsedMs]);
      latencies.set(k, [...(latencies.get(k) ?? []), ...r.latenciesMs]);
      cpu.set(k, [...(cpu.get(k) ?? []), cpuMs / Math.max(1, r.ok)]);
    };
    const go = async (k: string, url: string, body: string, durationMs: number) => {
      const c0 = process.cpuUsage();
      const r = await load({ url, body, headers: { 'api-key': key }, concurrency: CONCURRENCY, durationMs });
      const c = process.cpuUsage(c0);
      return { r, cpuMs: (c.user + c.system) / 1000 };
    };
    // Warm-up of both (JIT, plans, pools).
    for (const t of targets) {
      await go('warm', t.service.url, t.service.body, 1500);
      await go('warm', t.baseline.url, t.baseline.body, 1000);
    }
    for (let round = 0; round < ROUNDS; round += 1) {
      for (const t of targets) {
        const pair = round % 2 === 0 ? (['service', 'baseline'] as const) : (['baseline', 'service'] as const);
        for (const who of pair) {
          const { r, cpuMs } = await go(`${t.path} ${who}`, t[who].url, t[who].body, roundMs);
          note(`${t.path} ${who}`, r, cpuMs);
        }
      }
    }
    lines.push(
      `${CONCURRENCY} connections (load generator in another process), ${ROUNDS} interleaved rounds of ${roundMs} ms; ${ROWS} links and ${ROWS} orders in the environment; ` +
        `baseline: node:http + pg running the same SELECTs (page and bounded count) and JSON.stringify of the same fields; CPU is the service process's (the in-process baseline idle meanwhile)`,
    );
    for (const t of targets) {
      const s = `${t.path} service`;
      const b = `${t.path} baseline`;
      const rate = median(rates.get(s)!);
      const p99 = percentile(latencies.get(s)!, 99);
      const baseRate = median(rates.get(b)!);
      const baseP99 = percentile(latencies.get(b)!, 99);
      const cpuMs = median(cpu.get(s)!);
      lines.push(
        `  ${t.path}: service ${Math.round(rate)} req/s (p99 ${p99.toFixed(1)} ms, ${cpuMs.toFixed(2)} ms CPU/req), baseline ${Math.round(baseRate)} req/s (p99 ${baseP99.toFixed(1)} ms, ${median(cpu.get(b)!).toFixed(2)} ms CPU/req): ` +
          `${(rate / baseRate).toFixed(2)}x; ${(rate / ISSUE_RATE).toFixed(1)}x the issue's ${ISSUE_RATE} req/s`,
      );
      rows.push({
        path: `GraphQL ${t.path}, ${CONCURRENCY} connections`,
        target: `≥ ${TARGET_RATE} req/s (4× ${ISSUE_RATE}), p99 < ${TARGET_P99_MS} ms`,
        service: `${Math.round(rate)} req/s, p99 ${p99.toFixed(1)} ms`,
        baseline: `${Math.round(baseRate)} req/s, p99 ${baseP99.toFixed(1)} ms`,
        ratio: rate / baseRate,
        met: rate >= TARGET_RATE && p99 < TARGET_P99_MS,
        data: { rates: rates.get(s), baselineRates: rates.get(b), p99Ms: p99, baselineP99Ms: baseP99, cpuMsPerRequest: cpuMs },
      });
    }
    lines.push(`  load average (1 min) at the end: ${os.loadavg()[0]!.toFixed(1)}`);
  } finally {
    if (baseline) await new Promise((resolve) => baseline!.close(resolve));
    await pool?.end();
    await service?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return { name: 'GraphQL lists: paymentLinks(first:50) and orders(first:50) throughput', lines, rows };
}
