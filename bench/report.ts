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
