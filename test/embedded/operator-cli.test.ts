import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { cli } from '../support/cli';
import { startChildService, type ChildService } from '../support/child-service';
import { TEST_MASTER_KEY } from '../support/database';
import { request } from '../support/http';
import { TEST_ADMIN_TOKEN } from '../support/service';

/**
 * The operator's commands on the embedded database: run by the CLI itself while no server holds
 * the database, and through the running server's admin API while one does, with the same output.
 */
describe('operator commands through a server on the embedded database', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-operator-'));
  const saved = { ...process.env };
  let service: ChildService | undefined;

  beforeAll(() => {
    delete process.env.DATABASE_URL;
    Object.assign(process.env, {
      DATA_DIR: dataDir,
      MASTER_KEY: TEST_MASTER_KEY,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      MIGRATE_ON_START: 'true',
      LOG_LEVEL: 'silent',
      ENCRYPTION_KEY_BITS: '2048',
    });
  });
  afterAll(async () => {
    await service?.stop();
    process.env = saved;
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const json = async (args: string[]) => {
    const run = await cli([...args, '--json']);
    expect({ code: run.code, err: run.err }).toEqual({ code: 0, err: '' });
    return JSON.parse(run.out);
  };

  it('lists, shows settings, resets keys and migrates the same way directly and through the running server', async () => {
    // Directly: the CLI opens the embedded database itself.
    expect(await cli(['migrate'])).toEqual({ code: 0, out: '', err: 'migrations applied\n' });
    const created = await cli(['merchant:create', '--name', 'Operator Ltd', '--country', 'NG', '--email', 'ops@op.test', '--key-bits', '2048', '--json']);
    expect(created.code).toBe(0);
    const merchant = JSON.parse(created.out);
    const id = String(merchant.subsidiary.id);
    const directList = await json(['merchant:list']);
    expect(directList).toEqual({
      merchants: [{ id: merchant.subsidiary.id, name: 'Operator Ltd', country: 'NG', supportEmail: 'ops@op.test', createdAt: expect.any(String) }],
    });
    const directSettings = await json(['merchant:settings', '--id', id, '--fee-bearer', 'merchant', '--environment', 'live']);
    expect(directSettings).toEqual({ subsidiaryId: merchant.subsidiary.id, test: { feeBearer: 'customer' }, live: { feeBearer: 'merchant' } });
    const directUnknown = await cli(['merchant:settings', '--id', '999999', '--json']);
    const directReset = await json(['merchant:reset-keys', '--id', id, '--environment', 'live']);

    // A server now holds the database: the same commands go through it.
    service = await startChildService('', {
      DATA_DIR: dataDir,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      MIGRATE_ON_START: 'true',
      LOG_LEVEL: 'info',
    });
    expect(await json(['merchant:list'])).toEqual(directList);
    expect(await json(['merchant:settings', '--id', id, '--fee-bearer', 'merchant', '--environment', 'live'])).toEqual(directSettings);
    const viaServerUnknown = await cli(['merchant:settings', '--id', '999999', '--json']);
    expect(viaServerUnknown).toEqual(directUnknown);
    expect(viaServerUnknown.code).toBe(65);
    const migrated = await cli(['migrate']);
    expect(migrated.code).toBe(0);
    expect(migrated.out).toBe('');
    expect(migrated.err).toBe(`migrations applied\n(by the running server, process ${service.child.pid}, which migrates when it starts)\n`);

    // The test private key works, then a reset replaces it: the old one is refused at once.
    const oldPrivate = merchant.keys.test.privateKey;
    const verify = (apiKey: string) => request(service!.baseUrl, 'POST', '/checkout/order/verify', { apiKey, body: { reference: 'NONE-1' } });
    expect((await verify(oldPrivate)).status).not.toBe(401);
    const reset = await json(['merchant:reset-keys', '--id', id, '--environment', 'test']);
    expect(Object.keys(reset)).toEqual(Object.keys(directReset));
    expect(reset).toEqual({
      subsidiaryId: merchant.subsidiary.id,
      environment: 'test',
      publicKey: expect.stringMatching(/^PGW-PUBLICKEY-TEST-/),
      privateKey: expect.stringMatching(/^PGW-SECRETKEY-TEST-/),
      previousKeysExpireAt: expect.any(String),
    });
    expect(directReset).toMatchObject({ subsidiaryId: merchant.subsidiary.id, environment: 'live', privateKey: expect.stringMatching(/^PGW-SECRETKEY-LIVE-/) });
    expect((await verify(oldPrivate)).status).toBe(401);
    expect((await verify(merchant.keys.test.publicKey)).status).toBe(401);
    expect((await verify(reset.privateKey)).status).not.toBe(401);
    // The replaced live key (reset directly, before the server started) is refused too.
    expect((await verify(merchant.keys.live.privateKey)).status).toBe(401);
    // The reset is recorded in the server's log, without the keys.
    expect(service.logLines().filter((l) => l.event === 'keys.rotated')).toEqual([
      expect.objectContaining({ level: 30, msg: 'keys rotated', subsidiaryId: merchant.subsidiary.id, environment: 'test', kinds: ['public', 'private'] }),
    ]);
    expect(service.stdout()).not.toContain(reset.privateKey);

    const text = await cli(['merchant:reset-keys', '--id', id, '--environment', 'test', '--keys', 'private']);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(
      /^Reset the test keys of merchant \d+; the replaced keys stopped working at .+\.\nTest private key: PGW-SECRETKEY-TEST-[0-9a-f]{32}\nThe new keys are shown once: store them now\.\n$/,
    );
  }, 180_000);
});
