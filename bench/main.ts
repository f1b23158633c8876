import { runDecryptBench } from './decrypt.bench';
import { runWebhookBench } from './webhook.bench';

/** `npm run bench`: micro-benchmarks, each reporting ratios against a baseline measured in the same run. */
async function main(): Promise<void> {
  const benches = [runDecryptBench, runWebhookBench];
  for (const bench of benches) {
    const result = await bench();
    process.stdout.write(`\n## ${result.name}\n${result.lines.join('\n')}\n`);
  }
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
