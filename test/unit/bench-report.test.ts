import { percentile, replaceBenchSection, rowsTable, type BenchRow } from '../../bench/report';

describe('bench report', () => {
  it('prints a row that is not met plainly, with its note, and one that was not measured as such', () => {
    const rows: BenchRow[] = [
      { path: 'order create', target: '≥ 0.8×', service: '900 req/s', baseline: '1,000 req/s', ratio: 0.9, met: true },
      { path: 'status change → subscriber', target: 'p99 < 100 ms', service: 'p99 250 ms', met: false, note: 'p99 250 ms | on a loaded machine' },
      { path: 'webhooks', target: 'p99 < 1 s', service: '', met: null, note: 'needs a PostgreSQL server' },
    ];
    const lines = rowsTable(rows).split('\n');
    expect(lines[0]).toBe('| path | target | service | baseline | ratio | met |');
    expect(lines[2]).toBe('| order create | ≥ 0.8× | 900 req/s | 1,000 req/s | 0.90× | met |');
    // A pipe inside a cell is escaped, so the table keeps its columns.
    expect(lines[3]).toBe('| status change → subscriber | p99 < 100 ms | p99 250 ms |  |  | not met: p99 250 ms \\| on a loaded machine |');
    expect(lines[4]).toBe('| webhooks | p99 < 1 s |  |  |  | not measured: needs a PostgreSQL server |');
  });

  it('replaces only what lies between the README markers, and nothing without them', () => {
    const readme = 'intro\n<!-- bench:start -->\nold table\n<!-- bench:end -->\noutro\n';
    expect(replaceBenchSection(readme, '\nnew table\n')).toBe('intro\n<!-- bench:start -->\nnew table\n<!-- bench:end -->\noutro\n');
    expect(replaceBenchSection('intro\n', 'x')).toBeNull();
    expect(replaceBenchSection('<!-- bench:end --> <!-- bench:start -->', 'x')).toBeNull();
  });

  it('takes nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile(values, 100)).toBe(100);
    expect(percentile([], 99)).toBeNaN();
  });
});
