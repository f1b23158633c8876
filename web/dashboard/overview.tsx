import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { ApiError, gql, subscribe } from './api';
import { displayStatus, ErrorNote, Link, money, Status, useData, when } from './ui';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend);

interface MethodSummary {
  paymentMethod: string;
  currency: string;
  count: number;
  successful: number;
  failed: number;
  successRate: number;
  volume: string;
}
interface DailySummary {
  date: string;
  currency: string;
  count: number;
  successful: number;
  volume: string;
}
interface Summary {
  successRate: number;
  byMethod: MethodSummary[];
  daily: DailySummary[];
}

const SUMMARY = `query Summary($from: DateTimeISO!, $to: DateTimeISO!) {
  dashboardSummary(from: $from, to: $to) {
    successRate
    byMethod { paymentMethod currency count successful failed successRate volume }
    daily { date currency count successful volume }
  }
}`;

export const LATEST_ORDERS = `query Latest { orders(first: 10) { edges { node { orderReference status statusId amount currencyName paymentMethod dateCreated customer { emailAddress } } } } }`;
export const ALL_STATUS_CHANGES = `subscription AllChanges { orderStatusChanged { reference statusId status } }`;

const COLOURS = ['#1f5fbf', '#1b7f4c', '#a3367a', '#b35900', '#5b3fa8', '#0f6f78'];

/**
 * A bar chart, or the sentence `empty` when it has nothing to draw (no bars, or every bar at
 * zero): a blank strip says nothing. `shown` are the values as people read them (money
 * through the one formatter); `data` only sets the bars' heights.
 */
function BarChart(props: {
  labels: string[];
  datasets: { label: string; data: number[]; shown?: string[] }[];
  title: string;
  empty: string;
  percent?: boolean;
}) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const blank = props.labels.length === 0 || props.datasets.every((d) => d.data.every((v) => v === 0));
  useEffect(() => {
    if (!canvas.current || blank) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: props.labels,
        datasets: props.datasets.map((d, i) => ({ label: d.label, data: d.data, backgroundColor: COLOURS[i % COLOURS.length] })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: {
          legend: { display: props.datasets.length > 1 },
          tooltip: { callbacks: { label: (item) => `${item.dataset.label}: ${shownValue(props, item.datasetIndex, item.dataIndex)}` } },
        },
        scales: { y: { beginAtZero: true, ...(props.percent ? { max: 100 } : {}) } },
      },
    });
    return () => chart.destroy();
  }, [JSON.stringify(props), blank]);
  const summary = props.datasets.map((d, di) => `${d.label}: ${props.labels.map((l, i) => `${l} ${shownValue(props, di, i)}`).join(', ')}`).join('; ');
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      {blank ? (
        <p class="chart-empty">{props.empty}</p>
      ) : (
        <div class="chart-box">
          <canvas ref={canvas} role="img" aria-label={`${props.title}. ${summary}`} />
        </div>
      )}
    </figure>
  );
}

function shownValue(props: { datasets: { data: number[]; shown?: string[] }[]; percent?: boolean }, dataset: number, index: number): string {
  const d = props.datasets[dataset]!;
  return d.shown?.[index] ?? `${d.data[index]}${props.percent ? '%' : ''}`;
}

/** A money series: bar heights from the amounts, the words through the one money format. */
const moneySeries = (label: string, amounts: string[], currencies: string[]) => ({
  label,
  data: amounts.map((a) => Number(a)),
  shown: amounts.map((a, i) => money(a, currencies[i])),
});

const NO_PAYMENTS = 'No payments in this period.';

/** A rate (0 to 1) as a percentage with one decimal. */
const percent = (rate: number) => Math.round(rate * 1000) / 10;

/** The volume (exact money, by currency) and order-count charts of one group of rows. */
function VolumeAndOrderCharts(props: { labels: string[]; volumes: string[]; currencies: string[]; counts: number[] }) {
  return (
    <>
      <BarChart title="Volume" empty={NO_PAYMENTS} labels={props.labels} datasets={[moneySeries('Volume', props.volumes, props.currencies)]} />
      <BarChart title="Orders" empty="No orders in this period." labels={props.labels} datasets={[{ label: 'Orders', data: props.counts }]} />
    </>
  );
}

/** Orders not yet paid by any method are summed under an empty method name. */
const methodName = (method: string) => method || 'Not paid yet';

function methodCharts(title: string, summary: Summary, refunded: ComponentChildren) {
  const rows = summary.byMethod;
  const labels = rows.map((r) => `${methodName(r.paymentMethod)} (${r.currency})`);
  return (
    <section class="panel" aria-label={title}>
      <h2>{title}</h2>
      {refunded}
      {rows.length === 0 ? (
        <p>No orders in this period.</p>
      ) : (
        <>
          <table class="compact">
            <caption class="sr-only">{title} by payment method</caption>
            <thead>
              <tr>
                <th scope="col">Method</th>
                <th scope="col">Volume</th>
                <th scope="col">Count</th>
                <th scope="col">Success rate</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr>
                  <td>{methodName(r.paymentMethod)}</td>
                  <td>{money(r.volume, r.currency)}</td>
                  <td>{r.count}</td>
                  <td>{percent(r.successRate)}%</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="charts">
            <VolumeAndOrderCharts
              labels={labels}
              volumes={rows.map((r) => r.volume)}
              currencies={rows.map((r) => r.currency)}
              counts={rows.map((r) => r.count)}
            />
            <BarChart
              title="Success rate"
              empty="No successful payments in this period."
              percent
              labels={labels}
              datasets={[{ label: 'Success rate', data: rows.map((r) => percent(r.successRate)) }]}
            />
          </div>
        </>
      )}
    </section>
  );
}

function DailyChart(props: { daily: DailySummary[] }) {
  const currencies = [...new Set(props.daily.map((d) => d.currency))];
  const dates = [...new Set(props.daily.map((d) => d.date))].sort();
  return (
    <BarChart
      title="Daily volume, last 30 days"
      empty={NO_PAYMENTS}
      labels={dates}
      datasets={currencies.map((c) =>
        moneySeries(
          c,
          dates.map((d) => props.daily.find((x) => x.date === d && x.currency === c)?.volume ?? '0'),
          dates.map(() => c),
        ),
      )}
    />
  );
}

const BY_STATUS = `query SummaryByStatus($from: DateTimeISO!, $to: DateTimeISO!) {
  dashboardSummary(from: $from, to: $to) { successRate byStatus { status statusId currency count amount } }
}`;

interface StatusRow {
  status: string;
  statusId: number;
  currency: string;
  count: number;
  amount: string;
}

/** The summary by payment method; on a server whose summary has no per-method figures, the figures by status it does have. */
async function loadFigures(from: string, to: string): Promise<{ dashboardSummary: Summary } | { byStatus: StatusRow[]; successRate: number; note: string }> {
  try {
    return await gql<{ dashboardSummary: Summary }>(SUMMARY, { from, to });
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'GRAPHQL_VALIDATION_FAILED') throw err;
    const r = await gql<{ dashboardSummary: { successRate: number; byStatus: StatusRow[] } }>(BY_STATUS, { from, to });
    return { ...r.dashboardSummary, note: 'Figures per payment method are not available from this server; shown by status.' };
  }
}

const REFUNDED = `query Refunded($from: DateTimeISO!, $to: DateTimeISO!) { dashboardSummary(from: $from, to: $to) { refunded { currency count amount } } }`;

/** The SUCCEEDED refunds of one currency asked for in the period. */
interface RefundedVolume {
  currency: string;
  count: number;
  amount: string;
}

/** The period's refunded volume, per currency; null from a server that knows no refunds. */
async function loadRefunded(from: string, to: string): Promise<RefundedVolume[] | null> {
  try {
    return (await gql<{ dashboardSummary: { refunded: RefundedVolume[] } }>(REFUNDED, { from, to })).dashboardSummary.refunded;
  } catch (err) {
    if (err instanceof ApiError && err.code === 'GRAPHQL_VALIDATION_FAILED') return null;
    throw err;
  }
}

/** The period's figures and, beside them, its refunded volume. */
async function loadSummary(from: string, to: string) {
  const [figures, refunded] = await Promise.all([loadFigures(from, to), loadRefunded(from, to)]);
  return { figures, refunded };
}

/** "Refunded: NGN 1,500.00 (1 refund)", one per currency; nothing from a server without refunds. */
function RefundedLine(props: { refunded: RefundedVolume[] | null }) {
  if (!props.refunded) return null;
  return (
    <p class="refunded">
      Refunded:{' '}
      {props.refunded.length === 0
        ? 'nothing'
        : props.refunded.map((r, i) => (
            <>
              {i > 0 && ', '}
              <strong>{money(r.amount, r.currency)}</strong> ({r.count} refund{r.count === 1 ? '' : 's'})
            </>
          ))}
    </p>
  );
}

function statusCharts(title: string, summary: { byStatus: StatusRow[]; successRate: number; note: string }, refunded: ComponentChildren) {
  const rows = summary.byStatus;
  const labels = rows.map((r) => `${displayStatus(r.status)} (${r.currency})`);
  return (
    <section class="panel" aria-label={title}>
      <h2>{title}</h2>
      <p class="muted small">{summary.note}</p>
      <p>
        Success rate: <strong>{percent(summary.successRate)}%</strong>
      </p>
      {refunded}
      {rows.length === 0 ? (
        <p>No orders in this period.</p>
      ) : (
        <div class="charts">
          <VolumeAndOrderCharts
            labels={labels}
            volumes={rows.map((r) => r.amount)}
            currencies={rows.map((r) => r.currency)}
            counts={rows.map((r) => r.count)}
          />
        </div>
      )}
    </section>
  );
}

function summaryPanel(title: string, data: Awaited<ReturnType<typeof loadSummary>>) {
  const refunded = <RefundedLine refunded={data.refunded} />;
  return 'dashboardSummary' in data.figures ? methodCharts(title, data.figures.dashboardSummary, refunded) : statusCharts(title, data.figures, refunded);
}

/** Today and the last 30 days by payment method, and the latest orders, live. */
export function Overview() {
  const now = new Date();
  const startOfDay = new Date(now.getFullYear(), now.getMonth(), now.getDate());
  const monthAgo = new Date(startOfDay.getTime() - 29 * 86_400_000);
  const to = new Date(startOfDay.getTime() + 86_400_000).toISOString();
  const today = useData(() => loadSummary(startOfDay.toISOString(), to), []);
  const month = useData(() => loadSummary(monthAgo.toISOString(), to), []);
  const latest = useData(() => gql(LATEST_ORDERS), []);

  // Every committed status change of this environment: fetch the figures and the latest
  // orders again, once per burst of changes (a payment moves an order through several).
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = subscribe(ALL_STATUS_CHANGES, {}, () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        today.reload();
        month.reload();
        latest.reload();
      }, 250);
    });
    return () => {
      clearTimeout(timer);
      stop();
    };
  }, []);

  return (
    <>
      <h1>Overview</h1>
      <div class="summaries">
        {today.data ? (
          summaryPanel('Today', today.data)
        ) : today.error ? (
          <section class="panel">
            <h2>Today</h2>
            <ErrorNote error={`Summary unavailable: ${today.error}`} />
          </section>
        ) : (
          <p>Loading…</p>
        )}
        {month.data ? (
          <>
            {summaryPanel('Last 30 days', month.data)}
            {'dashboardSummary' in month.data.figures && (
              <section class="panel daily" aria-label="Daily volume">
                <DailyChart daily={month.data.figures.dashboardSummary.daily} />
              </section>
            )}
          </>
        ) : month.error ? (
          <section class="panel">
            <h2>Last 30 days</h2>
            <ErrorNote error={`Summary unavailable: ${month.error}`} />
          </section>
        ) : null}
      </div>
      <section class="panel" aria-labelledby="latest-heading">
        <h2 id="latest-heading">Latest orders</h2>
        <ErrorNote error={latest.error} />
        {latest.data && <OrderTable orders={latest.data.orders.edges.map((e: any) => e.node)} />}
        <p>
          <Link href="/dashboard/orders">All orders</Link>
        </p>
      </section>
    </>
  );
}

export function OrderTable(props: { orders: any[] }) {
  if (props.orders.length === 0) return <p>No orders.</p>;
  return (
    <div class="table-wrap">
      <table>
        <thead>
          <tr>
            <th scope="col">Reference</th>
            <th scope="col">Status</th>
            <th scope="col">Amount</th>
            <th scope="col">Method</th>
            <th scope="col">Customer</th>
            <th scope="col">Created</th>
          </tr>
        </thead>
        <tbody>
          {props.orders.map((o) => (
            <tr data-reference={o.orderReference}>
              <td>
                <Link href={`/dashboard/orders/${encodeURIComponent(o.orderReference)}`}>{o.orderReference}</Link>
              </td>
              <td>
                <Status status={o.status} statusId={o.statusId} />
              </td>
              <td class="num">{money(o.amount, o.currencyName)}</td>
              <td>{o.paymentMethod || '—'}</td>
              <td>{o.customer?.emailAddress ?? '—'}</td>
              <td>{when(o.dateCreated)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
