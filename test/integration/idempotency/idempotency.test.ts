import { createHash } from 'node:crypto';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { ManualClock } from '../../../src/shared/clock';
import { createScratchDatabase } from '../../support/scratch-database';
import type { Tenant } from '../../../src/merchants/tenant';
import { request } from '../../support/http';
import { encryptPayload } from '../../../packages/sdk/src';

/** Fingerprints are SHA-256 hex, as the REST adapter computes them. */
const FP = 'a'.repeat(64);

describe('idempotency keys over time', () => {
  let t: TestService;
  let clock: ManualClock;
  let tenant: Tenant;
  let scratch: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    clock = new ManualClock(new Date());
    // A database of this file's own: the purge removes every expired key it finds.
    scratch = await createScratchDatabase('idempotency');
    t = await startTestService({ DATABASE_URL: scratch.url }, { clock });
    const m = await createTestMerchant(t);
    tenant = await t.service.runtime.ctx.services.auth.authenticate(m.keys.test.publicKey);
  });
  afterAll(async () => {
    await t?.close();
    await scratch?.drop();
  });
  // A test that moves the clock leaves the real time to the next one, even when it fails.
  afterEach(() => clock.set(new Date()));

  const service = () => t.service.runtime.ctx.services.idempotency;
  const rows = async (key: string) =>
    (
      await t.service.runtime.ctx.orm.em
        .getConnection()
        .execute('select state from idempotency_key where environment_id = ? and key = ?', [tenant.environmentId, key])
    ).length;

  it('does the work again after the 24-hour window, and purges old answers', async () => {
    let runs = 0;
    const work = async () => ({ status: 200, body: JSON.stringify({ run: ++runs }) });
    expect((await service().run(tenant, 'window', FP, work)).body).toBe('{"run":1}');
    expect((await service().run(tenant, 'window', FP, work)).replayed).toBe(true);
    clock.advance(24 * 3600 * 1000 + 1000);
    expect((await service().run(tenant, 'window', FP, work)).body).toBe('{"run":2}');
    clock.advance(24 * 3600 * 1000 + 1000);
    expect(await service().purgeExpired()).toBe(1);
    expect(await rows('window')).toBe(0);
  });

  it('releases a key whose request died while in progress', async () => {
    // A process took the key and died before storing the answer.
    await t.service.runtime.ctx.orm.em
      .getConnection()
      .execute(`insert into idempotency_key (environment_id, key, fingerprint, state, created_at) values (?, 'orphan', ?, 'in_progress', ?)`, [
        tenant.environmentId,
        FP,
        clock.now(),
      ]);
    clock.advance(61_000);
    const res = await service().run(tenant, 'orphan', FP, async () => ({ status: 200, body: '{"ok":true}' }));
    expect(res).toEqual({ status: 200, body: '{"ok":true}', replayed: false });
  });

  it('does not store a 500: the client may retry', async () => {
    await service().run(tenant, 'fault', FP, async () => ({ status: 500, body: '{}' }));
    expect(await rows('fault')).toBe(0);
  });
});

describe('idempotency fingerprints cover the whole decrypted plaintext, keyed', () => {
  let t: TestService;
  let pub: string;
  let enc: string;
  beforeAll(async () => {
    t = await startTestService();
    ({ publicKey: pub, encryptionKey: enc } = (await createTestMerchant(t)).keys.test);
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (path: string, key: string, plaintext: object) =>
    request(t.baseUrl, 'POST', path, { apiKey: pub, headers: { 'idempotency-key': key }, body: { data: encryptPayload(plaintext, enc) } });
  const card = (cardNumber: string) => ({ cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123' });

  it('refuses the same key replayed with another card of the same last four digits and expiry', async () => {
    const reference = `IDEM-FP-${process.pid}-${Date.now()}`;
    const created = await post('/checkout/order/create', `${reference}-create`, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 1000, reference, description: 'Two tickets', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/done' },
    });
    expect(created.body.statusCode).toBe('01');

    const key = `${reference}-pay`;
    const first = await post('/checkout/order/pay', key, { reference, country: 'NG', paymentOption: 'C', card: card('5123450000000008') });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ statusCode: '02', message: 'pending-authenticaion' });

    // Same last four digits (0008), same expiry, another card: another request, not a replay of the first answer.
    const other = await post('/checkout/order/pay', key, { reference, country: 'NG', paymentOption: 'C', card: card('5123450000180008') });
    expect(other.status).toBe(422);
    expect(other.headers.get('idempotent-replayed')).toBeNull();
    expect(other.body).toEqual({ status: 'failed', statusCode: '422', message: 'This Idempotency-Key was already used with a different request.' });

    // The same card again, its properties in another order: the first answer, replayed.
    const again = await post('/checkout/order/pay', key, { card: card('5123450000000008'), paymentOption: 'C', country: 'NG', reference });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
  });

  it('stores a keyed HMAC, never a plain hash of the request', async () => {
    const key = `IDEM-HMAC-${process.pid}-${Date.now()}`;
    const plaintext = { reference: 'NOPE', country: 'NG', paymentOption: 'C', card: card('5123450000000008') };
    await post('/checkout/order/pay', key, plaintext);
    const [row] = await t.service.runtime.ctx.orm.em.getConnection().execute('select fingerprint from idempotency_key where key = ?', [key]);
    expect(row.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    // Whoever reads the table cannot test guesses of a card number against it without MASTER_KEY.
    const unkeyed = (parts: unknown[]) => createHash('sha256').update(JSON.stringify(parts)).digest('hex');
    expect(row.fingerprint).not.toBe(unkeyed(['POST', '/checkout/order/pay', {}, plaintext]));
    expect(row.fingerprint).toBe(t.service.runtime.ctx.services.idempotency.fingerprint(['POST', '/checkout/order/pay', {}, plaintext]));
  });
});
