import { performance } from 'node:perf_hooks';

/** What the bench sends to this load generator (a child process, so its work stays off the service's event loop). */
export interface LoadRequest {
  url: string;
  apiKey: string;
  /** One encrypted body per request, each with its own order reference; used in order. */
  payloads: string[];
  /** Instead of payloads: the raw JSON bodies, one per request (plain endpoints such as order/verify). */
  bodies?: string[];
  /** The envelope's statusCode of a success (default `01`, order/create). */
  okStatusCode?: string;
  concurrency: number;
  durationMs: number;
}

export interface LoadResult {
  ok: number;
  failed: number;
  firstFailure?: string;
  elapsedMs: number;
  latenciesMs: number[];
}

/** Closed loop: `concurrency` clients each POST, wait for the answer, POST again, until the time is up. */
async function run(req: LoadRequest): Promise<LoadResult> {
  const result: LoadResult = { ok: 0, failed: 0, elapsedMs: 0, latenciesMs: [] };
  let next = 0;
  const total = req.bodies?.length ?? req.payloads.length;
  const okCode = req.okStatusCode ?? '01';
  const start = performance.now();
  const client = async () => {
    while (performance.now() - start < req.durationMs && next < total) {
      const i = next++;
      const payload = req.bodies ? req.bodies[i]! : JSON.stringify({ data: req.payloads[i]! });
      const t0 = performance.now();
      const res = await fetch(req.url, { method: 'POST', headers: { 'api-key': req.apiKey, 'content-type': 'application/json' }, body: payload });
      const body = (await res.json()) as { statusCode?: string };
      result.latenciesMs.push(performance.now() - t0);
      if (res.status === 200 && body.statusCode === okCode) result.ok += 1;
      else {
        result.failed += 1;
        result.firstFailure ??= `${res.status} ${JSON.stringify(body)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: req.concurrency }, client));
  result.elapsedMs = performance.now() - start;
  if (next >= total) result.firstFailure ??= 'ran out of payloads before the time was up';
  return result;
}

// First the request (payloads included: a large message, sent before any measuring starts),
// answered with 'ready'; then 'go'.
process.once('message', (req: LoadRequest) => {
  process.once('message', () => {
    run(req).then(
      (result) => process.send!(result, () => process.exit(0)),
      (err) => {
        process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
        process.exit(1);
      },
    );
  });
  process.send!('ready');
});
