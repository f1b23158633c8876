import 'reflect-metadata';
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config';
import { createService, type Service } from '../src/bootstrap';
import { encryptPayload } from '../src/crypto/payload-client';
import { benchDatabaseEnv, freePort } from './bench-env';
import type { LoadRequest, LoadResult } from './order-load';

/**
 * What the protection on the hot paths costs: order/create (encrypted) and order/verify over
 * HTTP against two services that differ only in RATE_LIMIT (on, with limits high enough never
 * to refuse, against off), up at once with interleaved rounds so that changes in the machine's
 * load hit both alike. The ratio on/off is the figure; the rate check should cost microseconds.
 */
const CONCURRENCY = 16;
const ROUNDS = 4;

interface Target {
  name: string;
  baseUrl: string;
  publicKey: string;
  privateKey: string;
  encryptionKey: string;
  service: Service;
  dataDir: string;
}

async function startTarget(name: string, env: Record<string, string>): Promise<Target> {
  const port = await freePort();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `pgw-bench-hot-${name}-`));
  const service = await createService(loadConfig({ ...env, DATA_DIR: dataDir, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}` }), { logger: false });
  await service.app.listen({ port, host: '127.0.0.1' });
  const created = await service.runtime.ctx.services.merchants.createMerchant({ name: `Bench Hot ${name}`, country: 'NG', supportEmail: 'bench@hot.test', keyBits: 2048 });
  return { name, baseUrl: `http://127.0.0.1:${port}`, publicKey: created.keys.test.publicKey, privateKey: created.keys.test.privateKey, encryptionKey: created.keys.test.encryptionKey, service, dataDir };
}

async function load(req: LoadRequest): Promise<LoadResult> {
  const child = fork(path.join(__dirname, 'order-load.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`bench: the load generator exited with ${code}`))));
  const next = () => Promise.race([new Promise<unknown>((resolve) => child.once('message', resolve)), exited]);
  const ready = next();
  child.send(req);
  await ready;
  const result = next();
  child.send('go');
  return (await result) as LoadResult;
}

let counter = 0;
function orderPlaintext(reference: string) {
  return {
    customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada${counter % 50}@example.test` },
    order: { amount: 2500, reference, description: 'Bench order', currency: 'NGN' },
    payment: { RedirectUrl: 'https://shop.example.test/back' },
  };
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * (sorted.length - 1)))] ?? Number.NaN;
}

async function createRound(t: Target, durationMs: number): Promise<LoadResult> {
  const count = Math.ceil((durationMs / 1000) * 3000) + 50;
  const payloads = Array.from({ length: count }, () => encryptPayload(orderPlaintext(`H-${t.name}-${Date.now().toString(36)}-${(counter += 1)}`), t.encryptionKey));
  return load({ url: `${t.baseUrl}/checkout/order/create`, apiKey: t.publicKey, payloads, concurrency: CONCURRENCY, durationMs });
}

async function verifyRound(t: Target, references: string[], durationMs: number): Promise<LoadResult> {
  const count = Math.ceil((durationMs / 1000) * 8000) + 50;
  const bodies = Array.from({ length: count }, (_, i) => JSON.stringify({ reference: references[i % references.length] }));
  return load({ url: `${t.baseUrl}/checkout/order/verify`, apiKey: t.privateKey, payloads: [], bodies, okStatusCode: '00', concurrency: CONCURRENCY, durationMs });
}

export async function runHotPathsBench(): Promise<{ name: string; lines: string[] }> {
  const durationMs = Number(process.env.BENCH_DURATION_MS ?? 3000);
  const databaseUrl = process.env.BENCH_DATABASE_URL;
  const base: Record<string, string> = {
    ...benchDatabaseEnv(),
    LOG_LEVEL: 'silent',
    SCHEDULER_INTERVAL_MS: '0',
    WEBHOOK_CONCURRENCY: '0',
  };
  const never = '10000000';
  const on = await startTarget('on', { ...base, RATE_LIMIT: 'on', RATE_LIMIT_PER_KEY: never, RATE_LIMIT_PER_IP: never, MAX_CONNECTIONS_PER_IP: '0' });
  const off = await startTarget('off', { ...base, RATE_LIMIT: 'off' });
  const lines: string[] = [];
  try {
    const targets = [on, off];
    const references = new Map<Target, string[]>();
    for (const t of targets) {
      // Warm-up and the orders verify reads.
      const refs = Array.from({ length: 200 }, () => `V-${t.name}-${Date.now().toString(36)}-${(counter += 1)}`);
      const warm = await load({ url: `${t.baseUrl}/checkout/order/create`, apiKey: t.publicKey, payloads: refs.map((r) => encryptPayload(orderPlaintext(r), t.encryptionKey)), concurrency: CONCURRENCY, durationMs: 60_000 });
      if (warm.failed > 0 && warm.ok < refs.length) throw new Error(`bench: warm-up failed: ${warm.firstFailure}`);
      references.set(t, refs);
    }
    const roundMs = durationMs / ROUNDS;
    const rates = new Map<string, number[]>();
    const latencies = new Map<string, number[]>();
    const note = (key: string, r: LoadResult) => {
      if (r.failed > 0 && r.firstFailure !== 'ran out of payloads before the time was up') throw new Error(`bench: ${key}: ${r.failed} failed: ${r.firstFailure}`);
      rates.set(key, [...(rates.get(key) ?? []), (r.ok * 1000) / r.elapsedMs]);
      latencies.set(key, [...(latencies.get(key) ?? []), ...r.latenciesMs]);
    };
    for (let round = 0; round < ROUNDS; round += 1) {
      // Alternating which goes first, so that neither always follows the other's writes.
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const t of order) note(`create ${t.name}`, await createRound(t, roundMs));
      for (const t of order) note(`verify ${t.name}`, await verifyRound(t, references.get(t)!, roundMs));
    }
    const median = (key: string) => percentile(rates.get(key)!, 50);
    const p99 = (key: string) => percentile(latencies.get(key)!, 99);
    lines.push(
      `order/create (2048-bit, encrypted) and order/verify over HTTP, ${CONCURRENCY} clients (another process), ${ROUNDS} interleaved rounds of ${Math.round(roundMs)} ms; ` +
        (databaseUrl ? 'PostgreSQL server (BENCH_DATABASE_URL)' : 'embedded PGlite (BENCH_DATABASE_URL=postgres://… selects a server)'),
    );
    for (const path of ['create', 'verify']) {
      const a = `${path} on`;
      const b = `${path} off`;
      lines.push(
        `  ${path}: rate limits on ${Math.round(median(a))}/s (p99 ${p99(a).toFixed(1)} ms), off ${Math.round(median(b))}/s (p99 ${p99(b).toFixed(1)} ms): ` +
          `on/off ${(median(a) / median(b)).toFixed(2)}x`,
      );
    }
    lines.push(`  load average (1 min) at the end: ${os.loadavg()[0]!.toFixed(1)}`);
  } finally {
    for (const t of [on, off]) {
      await t.service.close();
      fs.rmSync(t.dataDir, { recursive: true, force: true });
    }
  }
  return { name: 'Hot paths: the cost of rate limiting on order/create and order/verify (issue 10 point 15)', lines };
}
