import 'reflect-metadata';
import { Client } from 'pg';
import { startTestService, type TestService } from '../support/service';
import { createTestMerchant } from '../support/merchants';
import { startChildService, type ChildService } from '../support/child-service';
import { graphql, postEncrypted, request } from '../support/http';
import { createScratchDatabase, waitFor } from './events/helpers';

/**
 * The per-instance caches of api-keys and tenant settings across two service processes on one
 * database: a change made through instance A, or by SQL outside any instance, is seen by
 * instance B (whose caches were warm), long before the caches' own expiry (ten minutes here) could
 * explain it; a key with a grace period stops at its expiry on B although nothing is announced at
 * that instant. How fast a change travels is not asserted here (a loaded machine decides it).
 */
describe('tenant caches across service processes', () => {
  let url: string;
  let drop: () => Promise<void> = async () => undefined;
  let t: TestService;
  let a: ChildService;
  let b: ChildService;
  const processes: ChildService[] = [];

  /** A real service process on the scratch database (its sources, as `npm start` runs them). */
  async function spawnService(): Promise<ChildService> {
    const service = await startChildService(url, {
      LOG_LEVEL: 'silent',
      DATABASE_POOL_SIZE: '3',
      // Long enough that only an invalidation, never the safety TTL, explains what B sees (the waits below give up after seconds).
      TENANT_CACHE_TTL_MS: '600000',
    });
    processes.push(service);
    return service;
  }

  beforeAll(async () => {
    const scratch = await createScratchDatabase('tenant_cache');
    url = scratch.url;
    drop = scratch.drop;
    t = await startTestService({ DATABASE_URL: url, WEBHOOK_CONCURRENCY: '0' });
    [a, b] = await Promise.all([spawnService(), spawnService()]);
  }, 300_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await t?.close();
    await drop();
  }, 30_000);

  const fee = (baseUrl: string, apiKey: string, encryptionKey: string) =>
    postEncrypted(baseUrl, '/checkout/order/fee', apiKey, encryptionKey, { amount: 1000, paymentOption: 'C', currency: 'NGN' });

  /** Polls until B sees the change; far shorter than B's cache TTL, so only the invalidation can explain it. */
  const seenOnB = (check: () => Promise<boolean>) => waitFor(check, 10_000, 'the change to be seen on B');

  it('a key rotated on A (no grace period) is refused on B; the new key works there', async () => {
    const m = await createTestMerchant(t, { keyBits: 2048 });
    const { publicKey, privateKey, encryptionKey } = m.keys.test;
    // B's caches warm with the old key.
    expect((await fee(b.baseUrl, publicKey, encryptionKey)).status).toBe(200);
    expect((await fee(b.baseUrl, publicKey, encryptionKey)).status).toBe(200);

    const rotated = await graphql(
      a.baseUrl,
      'mutation { rotateKeys(input: { keys: [PUBLIC], graceSeconds: 0 }) { publicKey } }',
      {},
      { 'api-key': privateKey },
    );
    expect(rotated.body.errors).toBeUndefined();
    await seenOnB(async () => (await fee(b.baseUrl, publicKey, encryptionKey)).status === 401);
    expect((await fee(b.baseUrl, rotated.body.data.rotateKeys.publicKey, encryptionKey)).status).toBe(200);
  }, 30_000);

  it('a key rotated with a grace period keeps working on B until its expiry and stops then, with nothing announced at that instant', async () => {
    const m = await createTestMerchant(t, { keyBits: 2048 });
    const { privateKey } = m.keys.test;
    const verify = (baseUrl: string) => request(baseUrl, 'POST', '/checkout/order/verify', { apiKey: privateKey, body: { reference: 'NO-SUCH-ORDER' } });
    expect((await verify(b.baseUrl)).status).toBe(404); // authenticated, cached on B
    const rotated = await graphql(
      a.baseUrl,
      'mutation { rotateKeys(input: { keys: [PRIVATE], graceSeconds: 4 }) { previousKeysExpireAt privateKey } }',
      {},
      { 'api-key': privateKey },
    );
    expect(rotated.body.errors).toBeUndefined();
    const expiresAt = new Date(rotated.body.data.rotateKeys.previousKeysExpireAt).getTime();
    // A later change announced the same way (the fee bearer, set on A): once B shows it, B has
    // also taken in the rotation announced before it, and reloaded the key with its expiry.
    const newPrivateKey: string = rotated.body.data.rotateKeys.privateKey;
    const set = await graphql(a.baseUrl, 'mutation { updateMerchantSettings(input: { feeBearer: CUSTOMER }) { feeBearer } }', {}, { 'api-key': newPrivateKey });
    expect(set.body.errors).toBeUndefined();
    const { publicKey, encryptionKey } = m.keys.test;
    await seenOnB(async () => (await fee(b.baseUrl, publicKey, encryptionKey)).body.data.customerFee !== 0);
    expect((await verify(b.baseUrl)).status).toBe(404); // still within the grace period
    await waitFor(async () => (await verify(b.baseUrl)).status === 401, 15_000, 'the old private key to stop on B');
    // Not before its expiry (the answer came after the key stopped).
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
  }, 30_000);

  it('an encryption key rotated on A: B refuses payloads under the old key and takes the new one', async () => {
    const m = await createTestMerchant(t, { keyBits: 2048 });
    const { publicKey, privateKey, encryptionKey } = m.keys.test;
    expect((await fee(b.baseUrl, publicKey, encryptionKey)).status).toBe(200);
    const rotated = await graphql(
      a.baseUrl,
      'mutation { rotateKeys(input: { keys: [ENCRYPTION], graceSeconds: 0 }) { encryptionKey } }',
      {},
      { 'api-key': privateKey },
    );
    expect(rotated.body.errors).toBeUndefined();
    await seenOnB(async () => (await fee(b.baseUrl, publicKey, encryptionKey)).status === 400);
    expect((await fee(b.baseUrl, publicKey, rotated.body.data.rotateKeys.encryptionKey)).status).toBe(200);
  }, 60_000);

  it('the fee bearer changed on A, and a fee rule changed by SQL outside any instance, are seen on B', async () => {
    const m = await createTestMerchant(t, { keyBits: 2048 });
    const { publicKey, privateKey, encryptionKey } = m.keys.test;
    const before = await fee(b.baseUrl, publicKey, encryptionKey);
    expect(before.body.data.customerFee).toBe(0);

    const set = await graphql(a.baseUrl, 'mutation { updateMerchantSettings(input: { feeBearer: CUSTOMER }) { feeBearer } }', {}, { 'api-key': privateKey });
    expect(set.body.errors).toBeUndefined();
    await seenOnB(async () => (await fee(b.baseUrl, publicKey, encryptionKey)).body.data.customerFee === before.body.data.fee);

    // An operator's own SQL: the merchant's rule for card payments in NGN, 3% with no flat part.
    const sql = new Client({ connectionString: url });
    await sql.connect();
    try {
      await sql.query(`insert into fee_rule (subsidiary_id, payment_option, currency, rate, flat, cap) values ($1, 'C', 'NGN', 0.03, 0, null)`, [
        m.subsidiary.id,
      ]);
    } finally {
      await sql.end();
    }
    await seenOnB(async () => (await fee(b.baseUrl, publicKey, encryptionKey)).body.data.fee === 30);
  }, 30_000);
});
