/**
 * What a bench section reports. `lines` are printed as they are; `rows` feed the table of
 * targets that `npm run bench` prints, writes to `bench/results/<date>.json` and puts in the
 * README. Every figure in a row comes from the same run as its baseline.
 */
export interface BenchRow {
  /** The path measured, e.g. "order create, 2048-bit". */
  path: string;
  /** The target in words, e.g. "≥ 0.8× baseline, p99 ≤ 1.3× baseline's, 0 errors". */
  target: string;
  /** What the service did, e.g. "1,820 req/s, p99 31 ms". */
  service: string;
  /** What the baseline measured beside it did, when there is one. */
  baseline?: string;
  /** service / baseline (throughput), when there is a baseline. */
  ratio?: number;
  /** Whether the target is met; null when it could not be measured in this run. */
  met: boolean | null;
  /** Why a target is not met, or what the figure means. */
  note?: string;
  /** Raw numbers for the results file. */
  data?: Record<string, unknown>;
}

export interface BenchSection {
  name: string;
  lines: string[];
  rows?: BenchRow[];
}

/** The machine a run was measured on (written beside the rows). */
export interface BenchMachine {
  cpuModel: string;
  cores: number;
  ramGiB: number;
  node: string;
  postgres: string;
  date: string;
  /** 1, 5 and 15 minute load averages when the run ended: figures from a busy machine are not comparable with a quiet one's. */
  loadAverage: number[];
}

/** "1,234" */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** The nearest-rank percentile (p in 0..100) of unsorted values; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

function metText(row: BenchRow): string {
  if (row.met === true) return 'met';
  if (row.met === false) return `not met${row.note ? `: ${row.note}` : ''}`;
  return `not measured${row.note ? `: ${row.note}` : ''}`;
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** The rows as a Markdown table: path | target | service | baseline | ratio | met. */
export function rowsTable(rows: readonly BenchRow[]): string {
  const lines = ['| path | target | service | baseline | ratio | met |', '|---|---|---|---|---|---|'];
  for (const row of rows) {
    const ratio = row.ratio === undefined || !Number.isFinite(row.ratio) ? '' : `${row.ratio.toFixed(2)}×`;
    lines.push(`| ${[row.path, row.target, row.service, row.baseline ?? '', ratio, metText(row)].map(cell).join(' | ')} |`);
  }
  return lines.join('\n');
}

/** One line naming the machine, for the table's caption. */
export function machineLine(m: BenchMachine): string {
  return `${m.date}: ${m.cpuModel}, ${m.cores} cores, ${m.ramGiB} GiB RAM, Node ${m.node}, ${m.postgres}; load average ${m.loadAverage.map((l) => l.toFixed(1)).join(' / ')} (1 / 5 / 15 min) at the end`;
}

export const README_START = '<!-- bench:start -->';
export const README_END = '<!-- bench:end -->';

/** `text` with what lies between the bench markers replaced by `body`; null when the markers are absent or out of order. */
export function replaceBenchSection(text: string, body: string): string | null {
  const start = text.indexOf(README_START);
  const end = text.indexOf(README_END, start + 1);
  if (start < 0 || end < 0) return null;
  return text.slice(0, start + README_START.length) + body + text.slice(end);
}
