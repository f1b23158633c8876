import fs from 'node:fs';
import path from 'node:path';
import { Piscina } from 'piscina';
import type { DecryptTask } from './decrypt-worker';
import { MAX_BLOCKS, parsePlaintext, PayloadDecryptionError, type PayloadDecryptor } from './payload-decryptor';

/**
 * Estimated CPU time of one RSA private-key block. Measured here (one core, OpenSSL through
 * node:crypto): 0.25 ms at 2048 bits, 1.9 ms at 3072, 4.1 ms at 4096; 0.3 ms × (bits/2048)^4
 * follows that closely enough to choose between inline and a worker.
 */
export function estimatedBlockMs(bits: number): number {
  return 0.3 * (bits / 2048) ** 4;
}

/**
 * Payloads estimated at most this long decrypt on the event loop. Posting to a worker and back
 * costs the event loop about 0.1 ms and the request about 0.3 ms of latency, which a one- or
 * two-block 2048-bit payload (0.3–0.6 ms) does not win back; 3072- and 4096-bit keys always
 * go to the workers.
 */
export const DEFAULT_INLINE_MAX_MS = 1;

/**
 * The workers run at a lower scheduling priority than the event loop (Linux: per thread, through
 * piscina's optional @napi-rs/nice; without it they run at normal priority), so that with
 * every core decrypting, the loop still gets a core the moment it has work. On a shared
 * 2-core machine the loop's p99 delay under a 4096-bit load roughly halved (noisy figures).
 * Idle cores still go to the workers in full; only when other processes want the cores too do
 * the workers get less of them (the bench shows both priorities).
 */
export const WORKER_NICE_INCREMENT = 5;

export interface DecryptPoolOptions {
  /** Worker threads; 0 decrypts everything on the event loop. */
  threads: number;
  inlineMaxMs?: number;
  /** Scheduling priority of the workers relative to the event loop (default WORKER_NICE_INCREMENT). */
  niceIncrement?: number;
}

/**
 * RSA decryption of payloads off the event loop: a fixed set of worker threads (piscina),
 * started with the service and destroyed when it closes. A 4096-bit private-key operation
 * costs milliseconds of CPU; run inline, a few concurrent payloads would hold up every other
 * request, and one core would do all the work.
 *
 * Whether a payload goes to a worker depends only on public facts (its length and the key
 * size), and a worker runs the same PayloadDecryptor code, so the constant-time unpadding and
 * the single error for every failure are the same on both paths.
 */
export class DecryptPool {
  readonly threads: number;
  private readonly inlineMaxMs: number;
  private readonly pool?: Piscina<DecryptTask, Uint8Array | null>;
  private closed = false;

  constructor(options: DecryptPoolOptions) {
    if (!Number.isInteger(options.threads) || options.threads < 0) throw new Error('DecryptPool: threads must be a whole number ≥ 0');
    this.threads = options.threads;
    this.inlineMaxMs = options.inlineMaxMs ?? DEFAULT_INLINE_MAX_MS;
    if (this.threads > 0) {
      this.pool = new Piscina({
        filename: workerFile(),
        minThreads: this.threads,
        maxThreads: this.threads,
        idleTimeout: Number.POSITIVE_INFINITY,
        niceIncrement: options.niceIncrement ?? WORKER_NICE_INCREMENT,
      });
    }
  }

  /** Whether `data` would be decrypted on the event loop rather than in a worker. */
  runsInline(decryptor: PayloadDecryptor, data: string): boolean {
    if (!this.pool) return true;
    const blocks = decryptor.blockCount(data);
    // Over the cap: refused before any RSA work, no need to post it anywhere.
    return blocks > MAX_BLOCKS || blocks * estimatedBlockMs(decryptor.bits) <= this.inlineMaxMs;
  }

  /** The decrypted JSON object; PayloadDecryptionError for every kind of bad payload. */
  async decrypt(decryptor: PayloadDecryptor, data: string): Promise<Record<string, unknown>> {
    if (this.closed) throw new Error('DecryptPool: closed');
    if (!this.pool || this.runsInline(decryptor, data)) return decryptor.decrypt(data);
    const bytes = await this.pool.run({ key: decryptor.material, data });
    if (bytes === null) throw new PayloadDecryptionError();
    return parsePlaintext(bytes);
  }

  /** Payloads decrypted by the worker threads so far. */
  get workerDecryptions(): number {
    return this.pool?.completed ?? 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.pool?.destroy();
  }
}

/**
 * The worker module beside this one: the compiled decrypt-worker.js in a build, or, when the
 * service runs from its TypeScript sources (tests), a small loader that compiles it.
 */
function workerFile(): string {
  const compiled = path.join(__dirname, 'decrypt-worker.js');
  return fs.existsSync(compiled) ? compiled : path.join(__dirname, 'decrypt-worker.source.js');
}
