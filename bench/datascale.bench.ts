import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { loadConfig } from '../src/config';
import { createService, type Service } from '../src/bootstrap';
import { benchDatabaseEnv, freePort, scratchDatabase } from './bench-env';
import type { BenchRow, BenchSection } from './report';

/**
 * Lists at scale: single-request latency of the order list (plain, by status, by payment
 * method, by e-mail), the dashboard summary and REST links/all, with 100k and then 1M orders
 * in one merchant environment. The orders are written with generate_series into a scratch
 * database beside BENCH_DATABASE_URL (`<name>_scale`, dropped and recreated each run).
 */
const SPAN_DAYS = 180;
const CUSTOMERS = 50_000;
const LINKS = 10_000;
const ROUNDS = 3;
const PER_ROUND = 9;
const TARGET_MS = 20;
const LINKS_TARGET_MS = 60;

const ORDER_FIELDS = `edges { cursor node { orderReference amount currencyName status paymentMethod dateCreated customer { emailAddress } } } pageInfo { hasNextPage endCursor }`;

interface Measured {
  label: string;
  medianMs: number;
  roundMediansMs: number[];
  sample?: unknown;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Rounds of single requests one after another; the median of the rounds' medians. */
async function measure(label: string, once: () => Promise<unknown>): Promise<Measured> {
  let sample: unknown;
  for (let i = 0; i < 3; i += 1) sample = await once(); // warm-up (plans, caches)
  const roundMediansMs: number[] = [];
  for (let r = 0; r < ROUNDS; r += 1) {
    const times: number[] = [];
    for (let i = 0; i < PER_ROUND; i += 1) {
      const t0 = performance.now();
      await once();
      times.push(performance.now() - t0);
    }
    roundMediansMs.push(median(times));
  }
  return { label, medianMs: median(roundMediansMs), roundMediansMs, sample };
}

/**
 * Orders g in [from, to) of the environment: spread over SPAN_DAYS up to now, 60% Successful,
 * 20% Failed, 15% Initiated (no payment method yet), 5% pending; card 80% / PayPal 20% of the
 * attempted; NGN 80%, USD 15%, GHS 5%; 20 orders per customer e-mail. Triggers are off while
 * loading (session_replication_role); the summary of the environment is rebuilt afterwards.
 */
async function loadOrders(db: Client, env: number, firstCustomerId: number, from: number, to: number): Promise<void> {
  await db.query('begin');
  await db.query(`set local session_replication_role = replica`);
  await db.query(`set local maintenance_work_mem = '256MB'`);
  // Building the indexes afterwards is several times faster than maintaining them row by row.
  const constraints = (
    await db.query(`select conname, pg_get_constraintdef(oid) as def from pg_constraint where conrelid = 'checkout_order'::regclass and contype = 'u'`)
  ).rows as Array<{ conname: string; def: string }>;
  const indexes = (
    await db.query(
      `select i.indexname, i.indexdef from pg_indexes i where i.tablename = 'checkout_order' and i.indexname <> 'checkout_order_pkey'
          and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`,
    )
  ).rows as Array<{ indexname: string; indexdef: string }>;
  for (const c of constraints) await db.query(`alter table checkout_order drop constraint "${c.conname}"`);
  for (const i of indexes) await db.query(`drop index "${i.indexname}"`);
  await db.query(
    `insert into checkout_order (environment_id, reference, processor_reference, payment_reference, customer_id, customer_email, customer_first_name,
        customer_last_name, customer_mobile, customer_country, amount, currency, fee, fee_rate, subsidiary_fee, customer_fee, total_charged_amount,
        status_id, narration, redirect_url, payment_method, payment_response_code, payment_response_message, created_at, updated_at, version)
     select $1::int, 'DS-' || g, 'PGWDS' || $1::int || 'X' || g, 'PAYDS' || $1::int || 'X' || g, $2 + g % ${CUSTOMERS}, 'cust' || (g % ${CUSTOMERS}) || '@example.test',
        'Ada', 'Obi', '+2348012345678', 'NG', a.amount, c.currency, round(a.amount * 0.015, 4), 0.015, 0, 0, a.amount,
        s.status_id, 'Bench order', 'https://shop.example.test/back',
        case when s.status_id = 1 then null when (g * 17) % 100 < 80 then 'C' else 'PAYPAL' end,
        case s.status_id when 5 then '00' when 4 then '51' else '01' end, 'bench',
        t.created_at, t.created_at, 1
       from generate_series($3::int, $4::int - 1) g
       cross join lateral (select (100 + (g % 9900) + (g % 100) / 100.0)::numeric(20,4) as amount) a
       cross join lateral (select case when (g * 13) % 100 < 80 then 'NGN' when (g * 13) % 100 < 95 then 'USD' else 'GHS' end as currency) c
       cross join lateral (select case when (g * 31) % 100 < 60 then 5 when (g * 31) % 100 < 80 then 4 when (g * 31) % 100 < 95 then 1 else 2 end::smallint as status_id) s
       cross join lateral (select now() - ((g::bigint * 2654435761) % (${SPAN_DAYS}::bigint * 86400000)) * interval '1 millisecond' as created_at) t
      order by t.created_at`,
    [env, firstCustomerId, from, to],
  );
  for (const c of constraints) await db.query(`alter table checkout_order add constraint "${c.conname}" ${c.def}`);
  for (const i of indexes) await db.query(i.indexdef);
  await db.query(`delete from order_summary where environment_id = $1`, [env]);
  await db.query(`delete from order_summary_delta where environment_id = $1`, [env]);
  await db.query(
    `insert into order_summary (environment_id, day, currency, payment_method, status_id, count, amount, fees)
     select environment_id, (created_at at time zone 'UTC')::date, currency, coalesce(payment_method, ''), status_id, count(*), sum(amount), sum(fee)
       from checkout_order where environment_id = $1 group by 1, 2, 3, 4, 5`,
    [env],
  );
  await db.query('commit');
  await db.query('vacuum analyze checkout_order');
}

export async function runDataScaleBench(): Promise<BenchSection> {
  const name = 'Lists at scale: orders, dashboard and links/all at 100k and 1M orders';
  const started = performance.now();
  if (!process.env.BENCH_DATABASE_URL) {
    const skipped = (path: string, target: string): BenchRow => ({
      path,
      target,
      service: 'not run',
      met: null,
      note: 'needs BENCH_DATABASE_URL (a PostgreSQL server)',
    });
    return {
      name,
      lines: ['skipped: the data-scale bench needs BENCH_DATABASE_URL (a PostgreSQL server to create a scratch database beside)'],
      rows: [
        skipped('at 1M orders: orders(first:50), filters, e-mail search, dashboard summary', `each < ${TARGET_MS} ms median`),
        skipped('REST links/all, 10k links', `< ${LINKS_TARGET_MS} ms`),
      ],
    };
  }
  const scratch = await scratchDatabase(process.env.BENCH_DATABASE_URL!, 'scale');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-bench-scale-'));
  const port = await freePort();
  let service: Service | undefined;
  const db = new Client({ connectionString: scratch.url });
  const lines: string[] = [];
  const rows: BenchRow[] = [];
  try {
    service = await createService(
      loadConfig({
        ...benchDatabaseEnv(),
        DATABASE_URL: scratch.url,
        DATA_DIR: dataDir,
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        LOG_LEVEL: 'silent',
        SCHEDULER_INTERVAL_MS: '0',
        WEBHOOK_CONCURRENCY: '0',
        RATE_LIMIT: 'off',
      }),
      { logger: false },
    );
    await service.app.listen({ port, host: '127.0.0.1' });
    const baseUrl = `http://127.0.0.1:${port}`;
    const created = await service.runtime.ctx.services.merchants.createMerchant({
      name: 'Bench Scale',
      country: 'NG',
      supportEmail: 'bench@scale.test',
      keyBits: 2048,
    });
    const key = created.keys.test.privateKey;
    const linksKey = created.keys.live.privateKey;
    const tenant = await service.runtime.ctx.services.auth.authenticate(key);
    const linksTenant = await service.runtime.ctx.services.auth.authenticate(linksKey);
    await db.connect();

    const env = tenant.environmentId;
    const t0 = performance.now();
    const [{ id: firstCustomerId }] = (
      await db.query(
        `insert into customer (environment_id, email, first_name, last_name, mobile, country)
         select $1, 'cust' || g || '@example.test', 'Ada', 'Obi', '+2348012345678', 'NG' from generate_series(0, ${CUSTOMERS - 1}) g returning id`,
        [env],
      )
    ).rows.sort((a: { id: number }, b: { id: number }) => a.id - b.id);
    await db.query(
      `insert into payment_link (environment_id, type_id, name, description, reference, amount, currency, date_created, date_updated)
       select $1::int, case when g % 3 = 0 then 1 when g % 3 = 1 then 2 else 5 end, 'Link ' || g, 'Bench link ' || g, 'PLDS' || $1::int || 'X' || g,
              case when g % 4 = 0 then null else (1000 + g)::numeric(20,4) end, 'NGN', now() - g * interval '1 minute', now() - g * interval '1 minute'
         from generate_series(1, ${LINKS}) g`,
      [linksTenant.environmentId],
    );

    const gql = async (query: string, variables: Record<string, unknown> = {}) => {
      const res = await fetch(`${baseUrl}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': key },
        body: JSON.stringify({ query, variables }),
      });
      const body = (await res.json()) as { data?: any; errors?: unknown[] };
      if (body.errors) throw new Error(`bench: GraphQL errors: ${JSON.stringify(body.errors)}`);
      return body.data;
    };
    const dayMs = 86_400_000;
    const to = new Date(Math.floor(Date.now() / dayMs) * dayMs + dayMs);
    const from = new Date(to.getTime() - 30 * dayMs);
    const queries: Array<[string, () => Promise<unknown>]> = [
      ['orders(first:50) with totalCount', () => gql(`{ orders(first: 50) { totalCount totalCountIsEstimate ${ORDER_FIELDS} } }`)],
      [
        'orders(first:50), status filter (Failed)',
        () => gql(`{ orders(first: 50, filter: { statusIds: [4] }) { totalCount totalCountIsEstimate ${ORDER_FIELDS} } }`),
      ],
      [
        'orders(first:50), two statuses (Initiated, pending)',
        () => gql(`{ orders(first: 50, filter: { statusIds: [1, 2] }) { totalCount totalCountIsEstimate ${ORDER_FIELDS} } }`),
      ],
      [
        'orders(first:50), payment-method filter (PayPal)',
        () => gql(`{ orders(first: 50, filter: { paymentMethod: "PayPal" }) { totalCount totalCountIsEstimate ${ORDER_FIELDS} } }`),
      ],
      [
        'orders(first:50), e-mail search',
        () => gql(`{ orders(first: 50, filter: { search: "CUST4242@example.test" }) { totalCount totalCountIsEstimate ${ORDER_FIELDS} } }`),
      ],
      [
        'orders(first:50), first page then the second (two requests)',
        async () => {
          const first = await gql(`{ orders(first: 50) { pageInfo { endCursor } } }`);
          return gql(`query ($after: String) { orders(first: 50, after: $after) { ${ORDER_FIELDS} } }`, { after: first.orders.pageInfo.endCursor });
        },
      ],
      [
        'dashboardSummary, 30 whole UTC days',
        () =>
          gql(
            `query ($from: DateTimeISO!, $to: DateTimeISO!) { dashboardSummary(from: $from, to: $to) { byStatus { statusId currency count amount fees } successRate byMethod { paymentMethod currency count successful failed successRate volume } daily { date currency count successful volume } } }`,
            { from: from.toISOString(), to: to.toISOString() },
          ),
      ],
      [
        'dashboardSummary, last 30 days to now (partial days read from orders)',
        () =>
          gql(
            `query ($from: DateTimeISO!, $to: DateTimeISO!) { dashboardSummary(from: $from, to: $to) { byStatus { statusId currency count amount } successRate byMethod { paymentMethod currency count volume } } }`,
            { from: new Date(Date.now() - 30 * dayMs).toISOString(), to: new Date().toISOString() },
          ),
      ],
    ];
    const results = new Map<number, Measured[]>();
    let loaded = 0;
    for (const size of [100_000, 1_000_000]) {
      const l0 = performance.now();
      await loadOrders(db, env, firstCustomerId, loaded, size);
      loaded = size;
      lines.push(`loaded ${size.toLocaleString('en')} orders in ${((performance.now() - l0) / 1000).toFixed(1)} s`);
      const measured: Measured[] = [];
      for (const [label, once] of queries) measured.push(await measure(label, once));
      results.set(size, measured);
      const first = measured[0]!.sample as { orders: { totalCount: number; totalCountIsEstimate: boolean } };
      lines.push(`  at ${size.toLocaleString('en')}: totalCount ${first.orders.totalCount} (estimate: ${first.orders.totalCountIsEstimate})`);
    }
    const links = await measure('REST links/all, 10k links', async () => {
      const res = await fetch(`${baseUrl}/checkout/links/all`, { headers: { 'api-key': linksKey } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`bench: links/all answered ${res.status}`);
      return text.length;
    });
    lines.push(
      `set-up and loading ${((performance.now() - t0) / 1000).toFixed(1)} s; median of ${ROUNDS} rounds' medians of ${PER_ROUND} single requests (after 3 warm-up), ms:`,
    );
    lines.push(`  ${'path'.padEnd(72)} ${'100k'.padStart(8)} ${'1M'.padStart(8)}`);
    const small = results.get(100_000)!;
    const large = results.get(1_000_000)!;
    large.forEach((m, i) => {
      lines.push(`  ${m.label.padEnd(72)} ${small[i]!.medianMs.toFixed(1).padStart(8)} ${m.medianMs.toFixed(1).padStart(8)}`);
      rows.push({
        path: `at 1M orders: ${m.label}`,
        target: `< ${TARGET_MS} ms median`,
        service: `${m.medianMs.toFixed(1)} ms (100k: ${small[i]!.medianMs.toFixed(1)} ms)`,
        met: m.medianMs < TARGET_MS,
        data: { medianMs: m.medianMs, roundMediansMs: m.roundMediansMs, at100kMs: small[i]!.medianMs },
      });
    });
    lines.push(`  ${'REST links/all, 10k links'.padEnd(72)} ${''.padStart(8)} ${links.medianMs.toFixed(1).padStart(8)}  (${links.sample} bytes)`);
    rows.push({
      path: 'REST links/all, 10k links',
      target: `< ${LINKS_TARGET_MS} ms`,
      service: `${links.medianMs.toFixed(1)} ms`,
      met: links.medianMs < LINKS_TARGET_MS,
      data: { medianMs: links.medianMs, roundMediansMs: links.roundMediansMs, bytes: links.sample },
    });
    lines.push(`  whole section ${((performance.now() - started) / 1000).toFixed(1)} s; load average (1 min) ${os.loadavg()[0]!.toFixed(1)}`);
  } finally {
    await db.end().catch(() => undefined);
    await service?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    // BENCH_SCALE_KEEP=1 keeps the database for profiling its queries by hand.
    if (process.env.BENCH_SCALE_KEEP !== '1') await scratch.drop().catch(() => undefined);
  }
  return { name, lines, rows };
}
