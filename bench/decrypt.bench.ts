import { createPrivateKey } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import forge from 'node-forge';
import { generateRsaKeyMaterial } from '../src/crypto/encryption-key';
import { encryptPayload } from '../packages/sdk/src/encryption';
import { PayloadDecryptor } from '../src/crypto/payload-decryptor';

/** A realistic order/create body (~200 bytes of JSON: one RSA-2048 block). */
function orderJson(i: number): string {
  return JSON.stringify({
    reference: `ORD-2026-${String(100000 + i)}`,
    amount: { value: '1499.00', currency: 'EUR' },
    customer: { email: `buyer${i}@example.com`, name: 'Jane Doe' },
    description: 'Annual plan',
    returnUrl: 'https://shop.example.com/return',
  });
}

interface Rate {
  ops: number;
  opsPerSecond: number;
}

/** Runs fn over the inputs (round robin) for about durationMs; checks the clock every op (an op is ≥ tens of µs). */
function measure<T>(inputs: T[], durationMs: number, fn: (input: T) => unknown): Rate {
  let ops = 0;
  const start = performance.now();
  let elapsed = 0;
  do {
    fn(inputs[ops % inputs.length]!);
    ops++;
    elapsed = performance.now() - start;
  } while (elapsed < durationMs);
  return { ops, opsPerSecond: (ops * 1000) / elapsed };
}

const fmt = (n: number): string => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));

/**
 * Payload decryptions per second on one 2048-bit key and the same single-block payloads:
 * (a) PayloadDecryptor (native RSA_NO_PADDING + constant-time unpadding + JSON.parse) and
 * (b) node-forge (RSAES-PKCS1-V1_5 in JavaScript + JSON.parse); plus a 1 KiB multi-block
 * figure for (a).
 */
export async function runDecryptBench(opts?: { durationMs?: number }): Promise<{ name: string; lines: string[] }> {
  const durationMs = Math.max(50, opts?.durationMs ?? 2000);
  const warmupMs = Math.min(500, Math.max(20, durationMs / 4));

  const material = await generateRsaKeyMaterial(2048);
  const native = new PayloadDecryptor(createPrivateKey(material.privateKeyPem));
  const forgeKey = forge.pki.privateKeyFromPem(material.privateKeyPem);
  const forgeDecrypt = (data: string): Record<string, unknown> =>
    JSON.parse(forge.util.decodeUtf8(forgeKey.decrypt(forge.util.decode64(data), 'RSAES-PKCS1-V1_5'))) as Record<string, unknown>;

  const plaintexts = Array.from({ length: 32 }, (_, i) => orderJson(i));
  const payloads = plaintexts.map((p) => encryptPayload(p, material.encryptionKey));
  const plaintextBytes = Buffer.byteLength(plaintexts[0]!, 'utf8');
  if (payloads.some((p) => Buffer.from(p, 'base64').length !== native.modulusBytes)) throw new Error('bench: the order JSON must fit one block');

  const bigPlaintext = JSON.stringify({ items: 'x'.repeat(1024 - 12) });
  const bigPayloads = Array.from({ length: 8 }, () => encryptPayload(bigPlaintext, material.encryptionKey));
  const bigBlocks = Buffer.from(bigPayloads[0]!, 'base64').length / native.modulusBytes;

  // Both paths must agree before their speed means anything.
  payloads.forEach((payload, i) => {
    const expected = JSON.parse(plaintexts[i]!) as unknown;
    if (JSON.stringify(native.decrypt(payload)) !== JSON.stringify(expected)) throw new Error('bench: native decryption mismatch');
    if (JSON.stringify(forgeDecrypt(payload)) !== JSON.stringify(expected)) throw new Error('bench: node-forge decryption mismatch');
  });
  if (JSON.stringify(native.decrypt(bigPayloads[0]!)) !== bigPlaintext) throw new Error('bench: multi-block mismatch');

  measure(payloads, warmupMs, (p) => native.decrypt(p));
  measure(payloads, warmupMs, forgeDecrypt);
  measure(bigPayloads, warmupMs / 2, (p) => native.decrypt(p));

  const a = measure(payloads, durationMs, (p) => native.decrypt(p));
  const b = measure(payloads, durationMs, forgeDecrypt);
  const c = measure(bigPayloads, durationMs / 2, (p) => native.decrypt(p));

  return {
    name: 'payload decryption (RSA-2048, PKCS#1 v1.5)',
    lines: [
      `single block (${plaintextBytes}-byte order JSON), ${durationMs} ms each after ${Math.round(warmupMs)} ms warm-up:`,
      `  native  (RSA_NO_PADDING + constant-time unpad + JSON.parse): ${fmt(a.opsPerSecond)} ops/s (${a.ops} ops)`,
      `  forge   (RSAES-PKCS1-V1_5 in JS + JSON.parse):               ${fmt(b.opsPerSecond)} ops/s (${b.ops} ops)`,
      `  native is ${(a.opsPerSecond / b.opsPerSecond).toFixed(1)}x node-forge`,
      `multi-block (${Buffer.byteLength(bigPlaintext)}-byte plaintext, ${bigBlocks} blocks), native: ${fmt(c.opsPerSecond)} ops/s ` +
        `(${fmt(c.opsPerSecond * bigBlocks)} blocks/s)`,
    ],
  };
}
