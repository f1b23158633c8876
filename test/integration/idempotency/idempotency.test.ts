import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { ManualClock } from '../../../src/shared/clock';
import { createScratchDatabase } from '../../support/scratch-database';
import type { Tenant } from '../../../src/merchants/tenant';

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
