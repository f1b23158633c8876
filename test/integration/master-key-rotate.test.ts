import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createScratchDatabase } from '../support/scratch-database';
import { startTestService } from '../support/service';
import { createTestMerchant } from '../support/merchants';
import { cli } from '../support/cli';
import { postEncrypted } from '../support/http';
import { TEST_MASTER_KEY } from '../support/database';
import { MasterKeyMismatchError } from '../../src/crypto/master-key';
import { generate } from 'otplib';
import { SEALED_COLUMNS } from '../../src/merchants/master-key-rotation';
import { SecretBox, parseMasterKey } from '../../src/crypto/secret-box';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const NEW_KEY = 'ef'.repeat(32);
const ROOT = path.resolve(__dirname, '../..');

/**
 * `master-key:rotate` re-seals every stored secret (webhook secrets, RSA private keys, TOTP secrets) and the
 * check value under a new MASTER_KEY in one transaction, on a database of this file's own (the
 * shared test database's secrets must stay under the test key).
 */
describe('master-key:rotate', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let db: Client;
  const saved = { ...process.env };
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-mkrotate-'));
  const merchants: CreatedMerchant[] = [];

  const useEnv = (env: Record<string, string | undefined>) => {
    process.env = { ...saved, DATABASE_URL: scratch.url, MIGRATE_ON_START: 'false', DATA_DIR: dataDir, LOG_LEVEL: 'silent', ...env };
    for (const [k, v] of Object.entries(process.env)) if (v === undefined) delete process.env[k];
  };
  const previous = { test: '', live: '' };
  /** Every sealed value, named `table.column`, with the key of its row (null values are not sealed). */
  const sealedValues = async () =>
    (
      await db.query(
        `${SEALED_COLUMNS.map((c) => `select '${c.table}.${c.column}' as t, "${c.key}" as id, "${c.column}" as v from "${c.table}" where "${c.column}" is not null`).join(' union all ')}
         union all select 'check', id, check_value from master_key_check order by 1, 2`,
      )
    ).rows;

  beforeAll(async () => {
    scratch = await createScratchDatabase('mkrotate');
    db = new Client({ connectionString: scratch.url });
    await db.connect();
    const t = await startTestService({ DATABASE_URL: scratch.url, MASTER_KEY: TEST_MASTER_KEY });
    try {
      merchants.push(await createTestMerchant(t), await createTestMerchant(t), await createTestMerchant(t));
      // One merchant is inside a signing-secret overlap in both environments: the replaced secrets are sealed too.
      const m = merchants[0]!;
      previous.test = m.webhookSecret;
      previous.live = m.liveWebhookSecret;
      const services = t.service.runtime.ctx.services;
      m.liveWebhookSecret = (await services.signingSecrets.rotate(await services.auth.authenticate(m.keys.live.privateKey), 3600)).webhookSecret;
      m.webhookSecret = (await services.signingSecrets.rotate(await services.auth.authenticate(m.keys.test.privateKey), 3600)).webhookSecret;
      // One is as a merchant made before each environment had its own secret: no test secret yet.
      await db.query('update subsidiary set test_webhook_secret_sealed = null where id = $1', [merchants[2]!.subsidiary.id]);
      // Two members: one with two-step sign-in on, one whose enrolment waits for its first code.
      const owner = await services.auth.authenticate(m.keys.test.privateKey);
      for (const email of ['on@mkrotate.example', 'waiting@mkrotate.example']) {
        const { invitationUrl } = await services.members.inviteMember(owner, { email, role: 'VIEWER' });
        await services.members.acceptInvitation(invitationUrl.split('/').pop(), 'correct horse battery');
      }
      const members = (await db.query(`select id, email, role from merchant_member where subsidiary_id = $1 order by id`, [m.subsidiary.id])).rows;
      const asMember = (row: { id: number; email: string; role: 'VIEWER' }) => ({
        ...owner,
        keyKind: undefined,
        keyId: undefined,
        member: { memberId: row.id, email: row.email, role: row.role, testOnly: false },
      });
      const { secret } = await services.memberTotp.startEnrolment(asMember(members[0]));
      await services.memberTotp.confirmEnrolment(asMember(members[0]), await generate({ secret }));
      await services.memberTotp.startEnrolment(asMember(members[1]));
    } finally {
      await t.close();
    }
  }, 120_000);

  afterAll(async () => {
    process.env = saved;
    await db?.end();
    await scratch?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('refuses to run without a usable new key', async () => {
    useEnv({ MASTER_KEY: TEST_MASTER_KEY, NEW_MASTER_KEY: undefined });
    expect((await cli(['master-key:rotate'])).code).toBe(64);
    useEnv({ MASTER_KEY: TEST_MASTER_KEY, NEW_MASTER_KEY: 'not-a-key' });
    const malformed = await cli(['master-key:rotate']);
    expect(malformed.code).toBe(64);
    expect(malformed.err).not.toContain('not-a-key'); // a secret is never echoed
    useEnv({ MASTER_KEY: TEST_MASTER_KEY, NEW_MASTER_KEY: TEST_MASTER_KEY });
    expect((await cli(['master-key:rotate'])).code).toBe(64);
    useEnv({ MASTER_KEY: TEST_MASTER_KEY, NEW_MASTER_KEY: NEW_KEY });
    expect((await cli(['master-key:rotate', '--generate'])).code).toBe(64);
  });

  it('changes nothing when one secret does not open (all or nothing)', async () => {
    const victim = merchants[1]!.subsidiary.id;
    const [original] = (await db.query('select webhook_secret_sealed from subsidiary where id = $1', [victim])).rows;
    // A secret that the current key does not open (sealed under some other key).
    const foreign = new SecretBox(parseMasterKey('12'.repeat(32))).seal('whsec_x', `subsidiary:${victim}:webhook-secret`);
    await db.query('update subsidiary set webhook_secret_sealed = $1 where id = $2', [foreign, victim]);
    const before = await sealedValues();
    try {
      useEnv({ MASTER_KEY: TEST_MASTER_KEY, NEW_MASTER_KEY: NEW_KEY });
      await expect(cli(['master-key:rotate'])).rejects.toBeInstanceOf(MasterKeyMismatchError);
      expect(await sealedValues()).toEqual(before);
    } finally {
      await db.query('update subsidiary set webhook_secret_sealed = $1 where id = $2', [original.webhook_secret_sealed, victim]);
    }
  }, 60_000);

  it('re-seals every secret and the check value; the old key is refused afterwards, the new one opens everything', async () => {
    const before = await sealedValues();
    useEnv({ MASTER_KEY: TEST_MASTER_KEY, NEW_MASTER_KEY: NEW_KEY });
    const rotated = await cli(['master-key:rotate', '--json']);
    expect(rotated.code).toBe(0);
    const [{ subsidiaries, keys }] = (
      await db.query('select (select count(*) from subsidiary)::int as subsidiaries, (select count(*) from encryption_key)::int as keys')
    ).rows;
    expect(JSON.parse(rotated.out)).toEqual({
      resealed: {
        'subsidiary.webhook_secret_sealed': subsidiaries,
        'subsidiary.test_webhook_secret_sealed': subsidiaries - 1,
        'encryption_key.private_key_sealed': keys,
        'webhook_secret_previous.secret_sealed': 1,
        'test_webhook_secret_previous.secret_sealed': 1,
        'merchant_member.totp_secret_sealed': 1,
        'merchant_member.totp_pending_secret_sealed': 1,
        'email_outbox.body_sealed': 0,
      },
      keyFile: null,
    });
    expect(keys).toBeGreaterThanOrEqual(4);

    // Every sealed value changed, and each opens with the new key in its own context only.
    const after = await sealedValues();
    expect(after.map((r) => [r.t, r.id])).toEqual(before.map((r) => [r.t, r.id]));
    const box = new SecretBox(parseMasterKey(NEW_KEY));
    const oldBox = new SecretBox(parseMasterKey(TEST_MASTER_KEY));
    for (const [i, row] of after.entries()) {
      expect(row.v).not.toBe(before[i]!.v);
      const context = row.t === 'check' ? 'master-key-check' : SEALED_COLUMNS.find((c) => `${c.table}.${c.column}` === row.t)!.context(Number(row.id));
      expect(box.open(row.v, context)).toBe(oldBox.open(before[i]!.v, context));
    }

    // The old key no longer starts the service.
    await expect(startTestService({ DATABASE_URL: scratch.url, MASTER_KEY: TEST_MASTER_KEY })).rejects.toBeInstanceOf(MasterKeyMismatchError);
    // The new one does: webhook secrets open, and payloads decrypt with the re-sealed private keys.
    const t = await startTestService({ DATABASE_URL: scratch.url, MASTER_KEY: NEW_KEY });
    try {
      const signing = t.service.runtime.ctx.services.signingSecrets;
      for (const m of merchants) expect(await signing.current(m.subsidiary.id, 'live')).toBe(m.liveWebhookSecret);
      for (const m of merchants.slice(0, 2)) expect(await signing.current(m.subsidiary.id, 'test')).toBe(m.webhookSecret);
      // The secrets replaced by a rotation still sign during their overlap, under the new key.
      expect(await signing.signing(merchants[0]!.subsidiary.id, 'live')).toEqual([merchants[0]!.liveWebhookSecret, previous.live]);
      expect(await signing.signing(merchants[0]!.subsidiary.id, 'test')).toEqual([merchants[0]!.webhookSecret, previous.test]);
      // The merchant without a test secret gets one when first needed, sealed under the new key.
      const made = await signing.current(merchants[2]!.subsidiary.id, 'test');
      expect(made).toMatch(/^whsec_/);
      const [{ sealed }] = (await db.query('select test_webhook_secret_sealed as sealed from subsidiary where id = $1', [merchants[2]!.subsidiary.id])).rows;
      expect(new SecretBox(parseMasterKey(NEW_KEY)).open(sealed, `subsidiary:${merchants[2]!.subsidiary.id}:test-webhook-secret`)).toBe(made);
      const m = merchants[0]!;
      const reference = `MKR-${Date.now()}`;
      const order = await postEncrypted(t.baseUrl, '/checkout/order/create', m.keys.test.publicKey, m.keys.test.encryptionKey, {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
        order: { amount: 100, reference, description: 'After rotation', currency: 'NGN' },
        payment: { RedirectUrl: 'https://merchant.test/back' },
      });
      expect(order.body.statusCode).toBe('01');
    } finally {
      await t.close();
    }
  }, 120_000);

  it('with MASTER_KEY unset, replaces the key file in DATA_DIR after the commit', async () => {
    // The database is now under NEW_KEY: pretend it is the generated key file's.
    fs.writeFileSync(path.join(dataDir, 'master.key'), `${NEW_KEY}\n`, { mode: 0o600 });
    useEnv({ MASTER_KEY: undefined, NEW_MASTER_KEY: undefined });
    const rotated = await cli(['master-key:rotate', '--generate', '--json']);
    expect(rotated.code).toBe(0);
    const report = JSON.parse(rotated.out);
    expect(report.keyFile).toBe(path.join(dataDir, 'master.key'));
    expect(report.newMasterKey).toBeUndefined(); // kept in the file, not printed
    const fileKey = fs.readFileSync(report.keyFile, 'utf8').trim();
    expect(fileKey).toMatch(/^[0-9a-f]{64}$/);
    expect(fileKey).not.toBe(NEW_KEY);
    expect(fs.statSync(report.keyFile).mode & 0o777).toBe(0o600);
    const t = await startTestService({ DATABASE_URL: scratch.url, MASTER_KEY: fileKey });
    try {
      expect(await t.service.runtime.ctx.services.signingSecrets.current(merchants[0]!.subsidiary.id, 'live')).toBe(merchants[0]!.liveWebhookSecret);
      expect(await t.service.runtime.ctx.services.signingSecrets.current(merchants[0]!.subsidiary.id, 'test')).toBe(merchants[0]!.webhookSecret);
    } finally {
      await t.close();
    }
  }, 120_000);

  it('knows every sealed column the migrations create', () => {
    const sealed = new Set<string>();
    for (const file of fs.readdirSync(path.join(ROOT, 'migrations')).filter((f) => f.endsWith('.ts'))) {
      const text = fs.readFileSync(path.join(ROOT, 'migrations', file), 'utf8');
      for (const m of text.matchAll(/create table "(\w+)" \(([^;]*)\);/g)) for (const c of m[2]!.matchAll(/"(\w+_sealed)"/g)) sealed.add(`${m[1]}.${c[1]}`);
      for (const m of text.matchAll(/alter table "(\w+)" add column "(\w+_sealed)"/g)) sealed.add(`${m[1]}.${m[2]}`);
    }
    expect([...sealed].sort()).toEqual(SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`).sort());
  });
});
