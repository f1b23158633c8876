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

function BarChart(props: { labels: string[]; datasets: { label: string; data: number[] }[]; title: string; percent?: boolean }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: {
        labels: props.labels,
        datasets: props.datasets.map((d, i) => ({ ...d, backgroundColor: COLOURS[i % COLOURS.length] })),
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: { legend: { display: props.datasets.length > 1 } },
        scales: { y: { beginAtZero: true, ...(props.percent ? { max: 100 } : {}) } },
      },
    });
    return () => chart.destroy();
  }, [JSON.stringify(props)]);
  const summary = props.datasets.map((d) => `${d.label}: ${props.labels.map((l, i) => `${l} ${d.data[i]}${props.percent ? '%' : ''}`).join(', ')}`).join('; ');
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div class="chart-box">
        <canvas ref={canvas} role="img" aria-label={`${props.title}. ${summary || 'No data'}`} />
      </div>
    </figure>
  );
}

/** Orders not yet paid by any method are summed under an empty method name. */
const methodName = (method: string) => method || 'Not paid yet';

function methodCharts(title: string, summary: Summary) {
  const rows = summary.byMethod;
  const labels = rows.map((r) => `${methodName(r.paymentMethod)} (${r.currency})`);
  return (
    <section class="panel" aria-label={title}>
      <h2>{title}</h2>
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
                  <td>{Math.round(r.successRate * 1000) / 10}%</td>
                </tr>
              ))}
            </tbody>
          </table>
          <div class="charts">
            <BarChart title="Volume" labels={labels} datasets={[{ label: 'Volume', data: rows.map((r) => Number(r.volume)) }]} />
            <BarChart title="Orders" labels={labels} datasets={[{ label: 'Orders', data: rows.map((r) => r.count) }]} />
            <BarChart
              title="Success rate"
              percent
              labels={labels}
              datasets={[{ label: 'Success rate', data: rows.map((r) => Math.round(r.successRate * 1000) / 10) }]}
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
  if (dates.length === 0) return null;
  return (
    <BarChart
      title="Daily volume, last 30 days"
      labels={dates}
      datasets={currencies.map((c) => ({ label: c, data: dates.map((d) => Number(props.daily.find((x) => x.date === d && x.currency === c)?.volume ?? 0)) }))}
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
async function loadSummary(from: string, to: string): Promise<{ dashboardSummary: Summary } | { byStatus: StatusRow[]; successRate: number; note: string }> {
  try {
    return await gql<{ dashboardSummary: Summary }>(SUMMARY, { from, to });
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 'GRAPHQL_VALIDATION_FAILED') throw err;
    const r = await gql<{ dashboardSummary: { successRate: number; byStatus: StatusRow[] } }>(BY_STATUS, { from, to });
    return { ...r.dashboardSummary, note: 'Figures per payment method are not available from this server; shown by status.' };
  }
}

function statusCharts(title: string, summary: { byStatus: StatusRow[]; successRate: number; note: string }) {
  const rows = summary.byStatus;
  const labels = rows.map((r) => `${displayStatus(r.status)} (${r.currency})`);
  return (
    <section class="panel" aria-label={title}>
      <h2>{title}</h2>
      <p class="muted small">{summary.note}</p>
      <p>
        Success rate: <strong>{Math.round(summary.successRate * 1000) / 10}%</strong>
      </p>
      {rows.length === 0 ? (
        <p>No orders in this period.</p>
      ) : (
        <div class="charts">
          <BarChart title="Volume" labels={labels} datasets={[{ label: 'Volume', data: rows.map((r) => Number(r.amount)) }]} />
          <BarChart title="Orders" labels={labels} datasets={[{ label: 'Orders', data: rows.map((r) => r.count) }]} />
        </div>
      )}
    </section>
  );
}

function summaryPanel(title: string, data: Awaited<ReturnType<typeof loadSummary>>) {
  return 'dashboardSummary' in data ? methodCharts(title, data.dashboardSummary) : statusCharts(title, data);
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

  useEffect(() => subscribe(ALL_STATUS_CHANGES, {}, () => latest.reload()), []);

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
            {'dashboardSummary' in month.data && (
              <section class="panel daily" aria-label="Daily volume">
                <DailyChart daily={month.data.dashboardSummary.daily} />
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
