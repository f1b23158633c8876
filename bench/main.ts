import type { BenchSection } from './report';
import { runDecryptBench } from './decrypt.bench';
import { runWebhookBench } from './webhook.bench';
import { runRsaBench } from './rsa.bench';
import { runHotPathsBench } from './hotpaths.bench';

const BENCHES: Record<string, () => Promise<BenchSection>> = {
  decrypt: runDecryptBench,
  webhook: runWebhookBench,
  rsa: runRsaBench,
  hotpaths: runHotPathsBench,
};

/**
 * `npm run bench`: micro-benchmarks, each reporting ratios against a baseline measured in the
 * same run. `npm run bench -- rsa` (or decrypt, webhook, hotpaths) runs only the ones named.
 */
async function main(): Promise<void> {
  const names = process.argv.slice(2);
  const unknown = names.filter((n) => !(n in BENCHES));
  if (unknown.length > 0) throw new Error(`unknown bench ${unknown.join(', ')}; choose from ${Object.keys(BENCHES).join(', ')}`);
  const benches = (names.length > 0 ? names : Object.keys(BENCHES)).map((n) => BENCHES[n]!);
  for (const bench of benches) {
    const result = await bench();
    process.stdout.write(`\n## ${result.name}\n${result.lines.join('\n')}\n`);
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
