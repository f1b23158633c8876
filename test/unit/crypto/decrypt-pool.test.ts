import { execFile } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { transformFileSync } from '@swc/core';
import { generateRsaKeyMaterial, type RsaKeyMaterial } from '../../../src/crypto/encryption-key';
import { encryptPayload } from '../../support/payload-client';
import { MAX_BLOCKS, PAYLOAD_DECRYPTION_FAILED, PayloadDecryptionError, PayloadDecryptor } from '../../../src/crypto/payload-decryptor';
import { DecryptPool, estimatedBlockMs } from '../../../src/crypto/decrypt-pool';
import { loadConfig } from '../../../src/config';

let key4096: RsaKeyMaterial;
let key3072: RsaKeyMaterial;
let key2048: RsaKeyMaterial;
let other2048: RsaKeyMaterial;
let d4096: PayloadDecryptor;
let d3072: PayloadDecryptor;
let d2048: PayloadDecryptor;
const pools: DecryptPool[] = [];
const pool = (options: ConstructorParameters<typeof DecryptPool>[0]) => {
  const p = new DecryptPool(options);
  pools.push(p);
  return p;
};

beforeAll(async () => {
  // No size given: the default, 4096 bits.
  [key4096, key3072, key2048, other2048] = await Promise.all([
    generateRsaKeyMaterial(),
    generateRsaKeyMaterial(3072),
    generateRsaKeyMaterial(2048),
    generateRsaKeyMaterial(2048),
  ]);
  [d4096, d3072, d2048] = [key4096, key3072, key2048].map((k) => new PayloadDecryptor(createPrivateKey(k.privateKeyPem)));
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.close()));
});

/** `{"p":"xxx…"}` of exactly n UTF-8 bytes. */
const jsonOfBytes = (n: number): string => `{"p":"${'x'.repeat(n - 8)}"}`;

async function outcome(run: () => unknown): Promise<unknown> {
  try {
    return { value: await run() };
  } catch (err) {
    return { error: err instanceof PayloadDecryptionError ? ['PayloadDecryptionError', err.message] : String(err) };
  }
}

describe('DecryptPool', () => {
  it('issues 4096-bit keys by default; ENCRYPTION_KEY_BITS takes 2048, 3072 or 4096', () => {
    expect(d4096.bits).toBe(4096);
    expect(loadConfig({}).encryptionKeyBits).toBe(4096);
    expect(loadConfig({ ENCRYPTION_KEY_BITS: '3072' }).encryptionKeyBits).toBe(3072);
    expect(loadConfig({ ENCRYPTION_KEY_BITS: '2048' }).encryptionKeyBits).toBe(2048);
    for (const bad of ['1024', '4095', '8192', 'big']) {
      expect(() => loadConfig({ ENCRYPTION_KEY_BITS: bad })).toThrow(`ENCRYPTION_KEY_BITS must be one of 2048, 3072, 4096 (got "${bad}")`);
    }
    expect(loadConfig({}).decryptThreads).toBe(os.availableParallelism());
    expect(loadConfig({ DECRYPT_THREADS: '0' }).decryptThreads).toBe(0);
    expect(() => loadConfig({ DECRYPT_THREADS: '-1' })).toThrow('DECRYPT_THREADS must be an integer from 0 to 256');
  });

  it('a 4096-bit one-block payload decrypts in a worker thread while the event loop keeps turning', async () => {
    const p = pool({ threads: 2 });
    const plaintext = jsonOfBytes(380);
    const data = encryptPayload(plaintext, key4096.encryptionKey);
    expect(Buffer.from(data, 'base64').length).toBe(512);
    expect(p.runsInline(d4096, data)).toBe(false);
    await p.decrypt(d4096, data); // the workers are warm

    expect(await p.decrypt(d4096, data)).toEqual(JSON.parse(plaintext));
    expect(p.workerDecryptions).toBe(2);

    // 8 blocks, some 35 ms of RSA work: a whole turn of the event loop goes by while it runs
    // elsewhere (inline, it was done before decrypt() even returned).
    const long = jsonOfBytes(8 * 501);
    let settled = false;
    const pending = p.decrypt(d4096, encryptPayload(long, key4096.encryptionKey)).finally(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(await pending).toEqual(JSON.parse(long));
    expect(p.workerDecryptions).toBe(3);
  });

  it('the workers answer exactly like inline decryption, the one error for every failure included', async () => {
    // inlineMaxMs -1: everything, even the cheapest payload, goes to a worker.
    const p = pool({ threads: 2, inlineMaxMs: -1 });
    const k = d2048.modulusBytes;
    const one = encryptPayload(jsonOfBytes(200), key2048.encryptionKey);
    const several = encryptPayload({ text: 'é€𝄞'.repeat(300) }, key2048.encryptionKey);
    const tampered = Buffer.from(one, 'base64');
    tampered[100] ^= 0x01;
    const cap = encryptPayload(jsonOfBytes((k - 11) * MAX_BLOCKS), key2048.encryptionKey);
    const overCap = encryptPayload(jsonOfBytes((k - 11) * MAX_BLOCKS + 1), key2048.encryptionKey);
    const cases: Record<string, unknown> = {
      'one block': one,
      'several blocks, multibyte characters split across them': several,
      [`${MAX_BLOCKS} blocks`]: cap,
      [`${MAX_BLOCKS + 1} blocks`]: overCap,
      'another key': encryptPayload(jsonOfBytes(200), other2048.encryptionKey),
      'a tampered block': tampered.toString('base64'),
      'not JSON': encryptPayload('plain words', key2048.encryptionKey),
      'a JSON array': encryptPayload('[1,2]', key2048.encryptionKey),
      'a JSON string': encryptPayload('"text"', key2048.encryptionKey),
      'a truncated block': Buffer.from(one, 'base64').subarray(1).toString('base64'),
      'a block ≥ the modulus': Buffer.alloc(k, 0xff).toString('base64'),
      'bad base64': `${one.slice(0, -4)}!!!=`,
      'non-canonical base64': `${one.slice(0, -2)}\n${one.slice(-2)}`,
      empty: '',
      'not a string': 42,
    };
    let posted = 0;
    for (const [name, data] of Object.entries(cases)) {
      const inline = await outcome(() => d2048.decrypt(data as string));
      const viaPool = await outcome(() => p.decrypt(d2048, data as string));
      expect({ name, viaPool }).toEqual({ name, viaPool: inline });
      if (!p.runsInline(d2048, data as string)) posted += 1;
    }
    expect(await outcome(() => p.decrypt(d2048, one))).toEqual({ value: JSON.parse(jsonOfBytes(200)) });
    expect(await outcome(() => p.decrypt(d2048, 'AAAA'))).toEqual({ error: ['PayloadDecryptionError', PAYLOAD_DECRYPTION_FAILED] });
    expect(posted).toBe(Object.keys(cases).length - 1); // all but the one over the cap
    expect(p.workerDecryptions).toBe(posted + 2);
  });

  it('cheap payloads stay on the event loop, costly ones go to the workers, no workers decrypts all inline', () => {
    const p = pool({ threads: 1 });
    const blocks = (material: RsaKeyMaterial, n: number) => encryptPayload(jsonOfBytes(Math.floor(material.bits / 8) * n - 11 * n), material.encryptionKey);
    expect(p.runsInline(d2048, blocks(key2048, 1))).toBe(true); // ~0.3 ms: the hop would cost more than it saves
    expect(p.runsInline(d2048, blocks(key2048, 3))).toBe(true);
    expect(p.runsInline(d2048, blocks(key2048, 4))).toBe(false);
    expect(p.runsInline(d3072, blocks(key3072, 1))).toBe(false);
    expect(p.runsInline(d4096, blocks(key4096, 1))).toBe(false);
    expect(estimatedBlockMs(4096) / estimatedBlockMs(2048)).toBe(16);
    const none = pool({ threads: 0 });
    expect(none.runsInline(d4096, blocks(key4096, 1))).toBe(true);
  });

  it('inline decryption still works without workers (DECRYPT_THREADS=0)', async () => {
    const none = pool({ threads: 0 });
    const data = encryptPayload(jsonOfBytes(380), key4096.encryptionKey);
    expect(await none.decrypt(d4096, data)).toEqual(JSON.parse(jsonOfBytes(380)));
    expect(none.workerDecryptions).toBe(0);
  });

  it('after close, a decryption fails as a fault of the service, not as a bad payload', async () => {
    const p = new DecryptPool({ threads: 1 });
    await p.close();
    const failure = await outcome(() => p.decrypt(d4096, encryptPayload(jsonOfBytes(100), key4096.encryptionKey)));
    expect(failure).toEqual({ error: expect.any(String) });
  });

  it('the compiled layout (decrypt-worker.js beside decrypt-pool.js, no TypeScript) decrypts through the workers', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-pool-'));
    try {
      const src = path.join(__dirname, '../../../src/crypto');
      for (const name of ['decrypt-pool', 'decrypt-worker', 'payload-decryptor', 'pkcs1']) {
        const { code } = transformFileSync(path.join(src, `${name}.ts`), {
          jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
          module: { type: 'commonjs' },
        });
        fs.writeFileSync(path.join(dir, `${name}.js`), code);
      }
      const script = `
        const { createPrivateKey } = require('node:crypto');
        const { DecryptPool } = require('./decrypt-pool.js');
        const { PayloadDecryptor } = require('./payload-decryptor.js');
        const [pem, data] = JSON.parse(process.argv[1]);
        (async () => {
          const pool = new DecryptPool({ threads: 1 });
          const decryptor = new PayloadDecryptor(createPrivateKey(pem));
          const value = await pool.decrypt(decryptor, data);
          process.stdout.write(JSON.stringify({ value, workers: pool.workerDecryptions }));
          await pool.close();
        })();`;
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['-e', script, JSON.stringify([key4096.privateKeyPem, encryptPayload({ ok: 'é'.repeat(150) }, key4096.encryptionKey)])],
        {
          cwd: dir,
          env: { ...process.env, NODE_PATH: path.join(__dirname, '../../../node_modules'), NODE_OPTIONS: '' },
        },
      );
      expect(JSON.parse(stdout)).toEqual({ value: { ok: 'é'.repeat(150) }, workers: 1 });
      expect(fs.existsSync(path.join(dir, 'decrypt-worker.source.js'))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
