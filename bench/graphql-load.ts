import http from 'node:http';
import { performance } from 'node:perf_hooks';

/** What the GraphQL bench sends to this load generator (a child process: its work stays off the measured event loop). */
export interface GraphqlLoadRequest {
  url: string;
  headers: Record<string, string>;
  /** The same POST body every time. */
  body: string;
  concurrency: number;
  durationMs: number;
}

export interface GraphqlLoadResult {
  ok: number;
  failed: number;
  firstFailure?: string;
  elapsedMs: number;
  latenciesMs: number[];
}

/** Closed loop over keep-alive connections: `concurrency` clients each POST, read the whole answer, POST again. */
async function run(req: GraphqlLoadRequest): Promise<GraphqlLoadResult> {
  const result: GraphqlLoadResult = { ok: 0, failed: 0, elapsedMs: 0, latenciesMs: [] };
  const agent = new http.Agent({ keepAlive: true, maxSockets: req.concurrency });
  const target = new URL(req.url);
  const body = Buffer.from(req.body);
  const headers = { ...req.headers, 'content-type': 'application/json', 'content-length': String(body.length) };
  const once = () =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const r = http.request({ agent, host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      });
      r.on('error', reject);
      r.end(body);
    });
  const start = performance.now();
  const client = async () => {
    while (performance.now() - start < req.durationMs) {
      const t0 = performance.now();
      try {
        const res = await once();
        result.latenciesMs.push(performance.now() - t0);
        // A GraphQL answer with errors names them first or after data; either way, not a success.
        if (res.status === 200 && res.text.startsWith('{"data"') && !res.text.includes('"errors":[')) result.ok += 1;
        else {
          result.failed += 1;
          result.firstFailure ??= `${res.status} ${res.text.slice(0, 300)}`;
        }
      } catch (err) {
        result.failed += 1;
        result.firstFailure ??= String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: req.concurrency }, client));
  result.elapsedMs = performance.now() - start;
  agent.destroy();
  return result;
}

// The request first, answered with 'ready'; then 'go'.
process.once('message', (req: GraphqlLoadRequest) => {
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
