import forge from 'node-forge';
import { cli } from '../support/cli';
import { parseEncryptionKey } from '../../src/crypto/encryption-key';
import { encryptPayload, parseEncryptionKey as parseClientKey } from '../support/payload-client';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';
import { TEST_DATABASE_URL, TEST_MASTER_KEY } from '../support/database';
import { graphql, request } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import { encryptOneBlock } from '../support/legacy-encryption';
import { startTestService, TEST_ADMIN_TOKEN, type TestService } from '../support/service';

const DECRYPTION_FAILED = {
  status: 'failed',
  statusCode: '400',
  message: 'Unable to decrypt the payload, please encrypt it with your encryption key and try again',
};

let refCounter = 0;
const nextRef = () => `LEG-${process.pid}-${Date.now()}-${++refCounter}`;
const shortRef = () => `L${Date.now().toString(36)}${++refCounter}`;

/**
 * An order plaintext of exactly `bytes` UTF-8 bytes: a typical legacy order (about 350 bytes
 * with a short description), or a compact one below that; the description grows up to 1,500
 * characters, then JSON whitespace makes up the rest.
 */
function orderOfBytes(reference: string, bytes: number): string {
  const typical = bytes >= 350;
  const order = (description: string) =>
    JSON.stringify(
      typical
        ? {
            customer: { firstname: 'Adaeze', lastname: 'Okonkwo-Bello', mobile: '+2348012345678', country: 'NG', email: 'adaeze.okonkwo@example.test' },
            order: { amount: 25000, reference, description, currency: 'NGN' },
            payment: { RedirectUrl: 'https://shop.merchant.test/checkout/complete?session=7f3a9c' },
          }
        : {
            customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'a@b.test' },
            order: { amount: 25000, reference, description, currency: 'NGN' },
            payment: { RedirectUrl: 'https://m.test/r' },
          },
    );
  const room = bytes - Buffer.byteLength(order(''));
  const text = order((typical ? 'Order for 2 items' : 'Order').padEnd(Math.min(room, 1500), '.'));
  const padded = text + ' '.repeat(Math.max(0, bytes - Buffer.byteLength(text)));
  expect(Buffer.byteLength(padded)).toBe(bytes);
  return padded;
}

/** What a legacy client does: the whole plaintext as ONE PKCS#1 v1.5 block, no slicing. */
const legacyOneBlock = encryptOneBlock;

describe('legacy key sizes (4096-bit keys, one-block payloads, decryption off the event loop)', () => {
  let t: TestService;
  let m4096: CreatedMerchant;
  beforeAll(async () => {
    // As deployed: ENCRYPTION_KEY_BITS at its default, 4096.
    t = await startTestService({ ENCRYPTION_KEY_BITS: '4096' });
    m4096 = await createTestMerchant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const createOrder = (data: string, keys = m4096.keys.test) =>
    request(t.baseUrl, 'POST', '/checkout/order/create', { apiKey: keys.publicKey, body: { data } });

  it('merchants get 4096-bit encryption keys by default', () => {
    for (const keys of [m4096.keys.test, m4096.keys.live]) expect(parseEncryptionKey(keys.encryptionKey).bits).toBe(4096);
  });

  it('a ~380-byte order plaintext encrypted as ONE 4096-bit block, as legacy clients send it, creates the order', async () => {
    const reference = nextRef();
    const plaintext = orderOfBytes(reference, 380);
    const data = legacyOneBlock(plaintext, m4096.keys.test.encryptionKey);
    expect(Buffer.from(data, 'base64').length).toBe(512); // one block
    const before = t.service.runtime.ctx.services.payloads.workerDecryptions;
    const res = await createOrder(data);
    expect(res.status).toBe(200);
    expect(res.body.data.order).toMatchObject({ reference, amount: 25000, status: 'Initiated', narration: expect.stringMatching(/^Order for 2 items\.+$/) });
    // Decrypted by a worker thread, not on the event loop.
    expect(t.service.runtime.ctx.services.payloads.workerDecryptions).toBe(before + 1);
    // The service's own client makes the same single block for it.
    expect(Buffer.from(encryptPayload(orderOfBytes(nextRef(), 380), m4096.keys.test.encryptionKey), 'base64').length).toBe(512);
  });

  it('the same plaintext cannot be one block under a 2048-bit key (what legacy clients hit before)', async () => {
    const m2048 = await createTestMerchant(t, { keyBits: 2048 });
    expect(parseEncryptionKey(m2048.keys.test.encryptionKey).bits).toBe(2048);
    const plaintext = orderOfBytes(nextRef(), 380);
    expect(() => legacyOneBlock(plaintext, m2048.keys.test.encryptionKey)).toThrow();
    const { publicKey } = parseClientKey(m2048.keys.test.encryptionKey);
    expect(() => publicKey.encrypt(forge.util.encodeUtf8(plaintext), 'RSAES-PKCS1-V1_5')).toThrow(/too long/i);
  });

  it('a plaintext of 501 bytes, the one-block limit of 4096-bit keys, still fits one block', async () => {
    const reference = nextRef();
    const data = legacyOneBlock(orderOfBytes(reference, 501), m4096.keys.test.encryptionKey);
    expect(Buffer.from(data, 'base64').length).toBe(512);
    const res = await createOrder(data);
    expect(res.status).toBe(200);
    expect(res.body.data.order.reference).toBe(reference);
  });

  it('multi-block payloads still work with 4096-bit keys', async () => {
    const reference = nextRef();
    const description = 'A long description. '.repeat(60).trim(); // ~1.2 KB: 3 blocks of 512 bytes
    const data = encryptPayload(
      {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
        order: { amount: 10, reference, description, currency: 'NGN' },
        payment: { RedirectUrl: 'https://merchant.test/done' },
      },
      m4096.keys.test.encryptionKey,
    );
    expect(Buffer.from(data, 'base64').length).toBe(3 * 512);
    const res = await createOrder(data);
    expect(res.status).toBe(200);
    expect(res.body.data.order.narration).toBe(description);
  });

  it.each([2048, 3072])('%i-bit keys still work, one block and several', async (bits) => {
    const m = await createTestMerchant(t, { keyBits: bits });
    expect(parseEncryptionKey(m.keys.test.encryptionKey).bits).toBe(bits);
    const k = bits / 8;
    const small = shortRef();
    const one = encryptPayload(orderOfBytes(small, 244), m.keys.test.encryptionKey);
    expect(Buffer.from(one, 'base64').length).toBe(k);
    const res = await createOrder(one, m.keys.test);
    expect(res.body).toMatchObject({ statusCode: '01' });
    expect(res.body.data.order.reference).toBe(small);
    const large = nextRef();
    const several = encryptPayload(orderOfBytes(large, 900), m.keys.test.encryptionKey);
    expect(Buffer.from(several, 'base64').length).toBe(Math.ceil(900 / (k - 11)) * k);
    expect((await createOrder(several, m.keys.test)).body.data.order.reference).toBe(large);
  });

  it('every decryption failure through the worker threads gets the one identical answer', async () => {
    const other = await createTestMerchant(t, { keyBits: 4096 });
    const enc = m4096.keys.test.encryptionKey;
    const good = Buffer.from(legacyOneBlock(orderOfBytes(nextRef(), 380), enc), 'base64');
    const tampered = Buffer.from(good);
    tampered[200] ^= 0x01; // bad padding (with overwhelming probability) and garbage after it
    const notJson = legacyOneBlock('this is not JSON, but well padded', enc);
    const tooMany = Buffer.concat(Array.from({ length: 33 }, () => good)).toString('base64');
    const cases: Record<string, string> = {
      'another merchant’s key': legacyOneBlock(orderOfBytes(nextRef(), 380), other.keys.test.encryptionKey),
      'a tampered block': tampered.toString('base64'),
      'valid padding, not JSON': notJson,
      'a JSON array': legacyOneBlock('[1,2,3]', enc),
      'a truncated block': good.subarray(0, 511).toString('base64'),
      'a block ≥ the modulus': Buffer.alloc(512, 0xff).toString('base64'),
      'bad base64': `${good.toString('base64').slice(0, -4)}!!!=`,
      'more than 32 blocks': tooMany,
    };
    const before = t.service.runtime.ctx.services.payloads.workerDecryptions;
    for (const [name, data] of Object.entries(cases)) {
      const res = await createOrder(data);
      expect({ name, status: res.status, body: res.body }).toEqual({ name, status: 400, body: DECRYPTION_FAILED });
    }
    // The RSA cases went through the workers (the 33-block one is refused before any RSA work).
    expect(t.service.runtime.ctx.services.payloads.workerDecryptions - before).toBeGreaterThanOrEqual(5);
  });

  it('concurrent 4096-bit payloads do not hold up the event loop', async () => {
    // 16 blocks each: about 70 ms of CPU per payload at 4096 bits, on the event loop before the fix.
    const plaintext = (reference: string) => orderOfBytes(reference, 16 * 501 - 50);
    const payloads = Array.from({ length: 12 }, () => {
      const reference = nextRef();
      return { reference, data: encryptPayload(plaintext(reference), m4096.keys.test.encryptionKey) };
    });
    expect(Buffer.from(payloads[0]!.data, 'base64').length).toBe(16 * 512);

    const before = t.service.runtime.ctx.services.payloads.workerDecryptions;
    const results = await Promise.all(payloads.map((p) => createOrder(p.data)));
    expect(results.map((r) => r.body.data?.order?.reference)).toEqual(payloads.map((p) => p.reference));
    // Every one decrypted in a worker thread, none on the event loop. What that spares the
    // loop (its delay under such a load, inline against the pool) is measured by
    // `npm run bench -- rsa`, not asserted here.
    expect(t.service.runtime.ctx.services.payloads.workerDecryptions - before).toBe(payloads.length);
  });

  it('the admin mutation createMerchant takes an optional keyBits', async () => {
    const create = (keyBits: number) =>
      graphql(
        t.baseUrl,
        `
          mutation ($input: CreateMerchantInput!) {
            createMerchant(input: $input) {
              keys {
                test {
                  encryptionKey
                }
                live {
                  encryptionKey
                }
              }
            }
          }
        `,
        { input: { name: 'Legacy GraphQL Ltd', country: 'NG', supportEmail: 'gql@legacy.test', keyBits } },
        { 'x-admin-token': TEST_ADMIN_TOKEN },
      );
    const res = await create(3072);
    expect(res.body.errors).toBeUndefined();
    expect(parseEncryptionKey(res.body.data.createMerchant.keys.live.encryptionKey).bits).toBe(3072);
    const refused = await create(1024);
    expect(refused.body.errors[0].message).toBe('The KeyBits field must be one of 2048, 3072, 4096.');
  });

  describe('the command line', () => {
    const saved = { ...process.env };
    beforeAll(() => {
      Object.assign(process.env, {
        DATABASE_URL: TEST_DATABASE_URL,
        MASTER_KEY: TEST_MASTER_KEY,
        MIGRATE_ON_START: 'false',
        DATA_DIR: t.config.dataDir,
        LOG_LEVEL: 'silent',
        DECRYPT_THREADS: '1',
      });
      delete process.env.ENCRYPTION_KEY_BITS;
    });
    afterAll(() => {
      process.env = saved;
    });

    const create = (...extra: string[]) =>
      cli(['merchant:create', '--name', 'Legacy Stores', '--country', 'NG', '--email', 'support@legacy.test', '--json', ...extra]);

    it('merchant:create issues 4096-bit keys by default, --key-bits N overrides ENCRYPTION_KEY_BITS', async () => {
      const byDefault = await create();
      expect(byDefault.code).toBe(0);
      expect(parseEncryptionKey(JSON.parse(byDefault.out).keys.test.encryptionKey).bits).toBe(4096);

      process.env.ENCRYPTION_KEY_BITS = '4096';
      const smaller = await create('--key-bits', '2048');
      expect(smaller.code).toBe(0);
      const printed = JSON.parse(smaller.out);
      expect(parseEncryptionKey(printed.keys.test.encryptionKey).bits).toBe(2048);
      expect(parseEncryptionKey(printed.keys.live.encryptionKey).bits).toBe(2048);

      process.env.ENCRYPTION_KEY_BITS = '3072';
      const fromEnv = await create();
      expect(parseEncryptionKey(JSON.parse(fromEnv.out).keys.live.encryptionKey).bits).toBe(3072);
    });

    it('merchant:create refuses other key sizes', async () => {
      for (const bits of ['1024', '8192', '4096.5', 'big']) {
        const res = await create('--key-bits', bits);
        expect(res).toMatchObject({ code: 65, out: '' });
        expect(res.err).toContain('The KeyBits field must be one of 2048, 3072, 4096.');
      }
    });
  });
});
