import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from 'pg';
import { machineLine, README_END, README_START, replaceBenchSection, rowsTable, type BenchMachine, type BenchRow, type BenchSection } from './report';

interface SectionEntry {
  /** What `npm run bench -- <name>` calls it. */
  name: string;
  load: () => Promise<() => Promise<BenchSection>>;
  /** In the default run (the sections behind the table of targets). */
  inDefault: boolean;
  /** Its share of the default run's ten minutes; exceeding it is reported, not fatal. */
  budgetMs?: number;
}

/**
 * Every section, one line each. The default run (`npm run bench`) takes those with
 * `inDefault`: together they fill the table of targets and stay under ten minutes.
 */
const SECTIONS: SectionEntry[] = [
  { name: 'hotpaths', load: () => import('./hotpaths.bench.js').then((m) => m.runHotPathsBench), inDefault: true, budgetMs: 210_000 },
  { name: 'graphql', load: () => import('./graphql.bench.js').then((m) => m.runGraphqlBench), inDefault: true, budgetMs: 120_000 },
  { name: 'datascale', load: () => import('./datascale.bench.js').then((m) => m.runDataScaleBench), inDefault: true, budgetMs: 120_000 },
  { name: 'events', load: () => import('./events.bench.js').then((m) => m.runEventsBench), inDefault: true, budgetMs: 120_000 },
  { name: 'notify', load: () => import('./notify.bench.js').then((m) => m.runNotifyBench), inDefault: false },
  { name: 'decrypt', load: () => import('./decrypt.bench.js').then((m) => m.runDecryptBench), inDefault: false },
  { name: 'webhook', load: () => import('./webhook.bench.js').then((m) => m.runWebhookBench), inDefault: false },
  { name: 'rsa', load: () => import('./rsa.bench.js').then((m) => m.runRsaBench), inDefault: false },
];

const ROOT = path.resolve(__dirname, '../..');

/**
 * `npm run bench`: the sections behind the table of performance targets, each measuring the
 * service beside its baseline in the same run; prints the table, writes
 * `bench/results/<date>.json` and the README's bench section. `npm run bench -- rsa events`
 * runs only the sections named (and writes no results file or README); `-- all` runs every one.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const byName = new Map(SECTIONS.map((s) => [s.name, s]));
  const unknown = args.filter((n) => n !== 'all' && !byName.has(n));
  if (unknown.length > 0) throw new Error(`unknown bench ${unknown.join(', ')}; choose from all, ${[...byName.keys()].join(', ')}`);
  const defaultRun = args.length === 0;
  const chosen = defaultRun ? SECTIONS.filter((s) => s.inDefault) : args.includes('all') ? SECTIONS : args.map((n) => byName.get(n)!);
  if (!process.env.BENCH_DATABASE_URL) {
    process.stdout.write('notice: BENCH_DATABASE_URL is not set: sections that need a PostgreSQL server report "not measured" (see docs/performance.md).\n');
  }

  const started = performance.now();
  const rows: BenchRow[] = [];
  const timings: Array<{ name: string; ms: number; budgetMs?: number }> = [];
  for (const entry of chosen) {
    const t0 = performance.now();
    let section: BenchSection;
    try {
      section = await (await entry.load())();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      process.stderr.write(`${err instanceof Error ? err.stack : message}\n`);
      section = {
        name: entry.name,
        lines: [`failed: ${message}`],
        rows: [{ path: entry.name, target: '', service: '', met: null, note: `the section failed: ${message}` }],
      };
    }
    const ms = performance.now() - t0;
    timings.push({ name: entry.name, ms, budgetMs: entry.budgetMs });
    const over = entry.budgetMs !== undefined && ms > entry.budgetMs ? ` (over its budget of ${Math.round(entry.budgetMs / 1000)} s)` : '';
    process.stdout.write(`\n## ${section.name}\n${section.lines.join('\n')}\n(${(ms / 1000).toFixed(0)} s${over})\n`);
    rows.push(...(section.rows ?? []));
  }
  const totalMs = performance.now() - started;
  if (rows.length === 0) return;

  const machine = await describeMachine();
  const table = rowsTable(rows);
  process.stdout.write(`\n## Targets\n${machineLine(machine)}; total ${(totalMs / 1000).toFixed(0)} s\n\n${table}\n`);
  if (!defaultRun) return;

  const resultsDir = path.join(ROOT, 'bench', 'results');
  fs.mkdirSync(resultsDir, { recursive: true });
  const file = path.join(resultsDir, `${machine.date}.json`);
  fs.writeFileSync(
    file,
    `${JSON.stringify({ machine, totalMs: Math.round(totalMs), sections: timings.map((t) => ({ ...t, ms: Math.round(t.ms) })), rows }, null, 2)}\n`,
  );
  process.stdout.write(`\nwrote ${path.relative(ROOT, file)}\n`);
  writeReadme(table, machine, totalMs);
}

/** Rewrites only what lies between the README's bench markers; without them, says so and leaves the README alone. */
function writeReadme(table: string, machine: BenchMachine, totalMs: number): void {
  const readme = path.join(ROOT, 'README.md');
  const text = fs.existsSync(readme) ? fs.readFileSync(readme, 'utf8') : '';
  const body = `\nMeasured by \`npm run bench\` in one run of ${(totalMs / 60_000).toFixed(1)} minutes on ${machineLine(machine)}.\n\n${table}\n`;
  const updated = replaceBenchSection(text, body);
  if (updated === null) {
    process.stdout.write(`notice: README.md has no ${README_START} … ${README_END} markers: the README was not updated.\n`);
    return;
  }
  fs.writeFileSync(readme, updated);
  process.stdout.write('updated the bench section of README.md\n');
}

async function describeMachine(): Promise<BenchMachine> {
  let postgres = 'embedded PGlite (no BENCH_DATABASE_URL)';
  const url = process.env.BENCH_DATABASE_URL;
  if (url) {
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      const { rows } = await client.query<{ v: string }>("select current_setting('server_version') as v");
      postgres = `PostgreSQL ${rows[0]!.v}`;
    } catch (err) {
      postgres = `PostgreSQL (version unknown: ${err instanceof Error ? err.message : String(err)})`;
    } finally {
      await client.end().catch(() => undefined);
    }
  }
  return {
    cpuModel: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    ramGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres,
    date: new Date().toISOString().slice(0, 10),
    loadAverage: os.loadavg().map((l) => Math.round(l * 10) / 10),
  };
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
