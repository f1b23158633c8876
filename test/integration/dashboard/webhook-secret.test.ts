import 'reflect-metadata';
import { ManualClock } from '../../../src/shared/clock';
import { verifyWebhook } from '../../../src/events/webhook-signature';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { EVENTS_ENV, createScratchDatabase, startReceiver, type Receiver } from '../events/helpers';

/**
 * Signing-secret rotation with an overlap, as the dashboard's Developers page uses it. On a
 * database of this file's own: its dispatch round (`runOnce`, under a moved clock) delivers
 * exactly this file's pings, and no other file's dispatcher signs them by the real clock.
 */
describe('webhook signing-secret rotation', () => {
  let t: TestService;
  let clock: ManualClock;
  let receiver: Receiver;
  let dropDatabase: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    const scratch = await createScratchDatabase('webhook_secret');
    dropDatabase = scratch.drop;
    clock = new ManualClock(new Date());
    receiver = await startReceiver();
    t = await startTestService({ ...EVENTS_ENV, DATABASE_URL: scratch.url, WEBHOOK_CONCURRENCY: '0' }, { clock });
  }, 30_000);
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await dropDatabase();
  });
  // A test that moves the clock leaves the real time to the next one, even when it fails.
  afterEach(() => clock.set(new Date()));

  const gql = async (apiKey: string, query: string) => (await request(t.baseUrl, 'POST', '/graphql', { apiKey, body: { query } })).body;

  async function ping(apiKey: string) {
    const before = receiver.received.length;
    const r = await gql(apiKey, 'mutation { sendTestWebhook { eventId } }');
    expect(r.data).toBeTruthy();
    // The round delivers this ping and nothing else: the database holds only this file's deliveries.
    expect(await t.service.runtime.ctx.services.webhooks.runOnce()).toBe(1);
    expect(receiver.received).toHaveLength(before + 1);
    const delivery = receiver.received[before];
    const headers = {
      id: String(delivery!.headers['webhook-id']),
      timestamp: String(delivery!.headers['webhook-timestamp']),
      signature: String(delivery!.headers['webhook-signature']),
    };
    const nowSeconds = Number(headers.timestamp);
    return {
      headers,
      livemode: JSON.parse(delivery!.body).livemode as boolean,
      verifies: (secret: string) => verifyWebhook(secret, headers, delivery!.body, { nowSeconds }),
    };
  }

  it('signs with the old and the new secret during the overlap, then with the new one only', async () => {
    const m = await createTestMerchant(t, { webhookUrl: receiver.url });
    const key = m.keys.test.privateKey;

    const rotated = await gql(key, 'mutation { rotateWebhookSecret(overlapSeconds: 3600) { webhookSecret previousSecretExpiresAt } }');
    const newSecret: string = rotated.data.rotateWebhookSecret.webhookSecret;
    expect(newSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(newSecret).not.toBe(m.webhookSecret);
    expect(new Date(rotated.data.rotateWebhookSecret.previousSecretExpiresAt).getTime()).toBe(clock.now().getTime() + 3_600_000);

    const during = await ping(key);
    expect(during.headers.signature.split(' ')).toHaveLength(2);
    expect(during.verifies(m.webhookSecret)).toBe(true);
    expect(during.verifies(newSecret)).toBe(true);

    clock.advance(3_601_000);
    const after = await ping(key);
    expect(after.headers.signature.split(' ')).toHaveLength(1);
    expect(after.verifies(newSecret)).toBe(true);
    expect(after.verifies(m.webhookSecret)).toBe(false);
  });

  it('without an overlap the old secret stops at once; public keys and bad overlaps are refused', async () => {
    const m = await createTestMerchant(t, { webhookUrl: receiver.url });
    const rotated = await gql(m.keys.test.privateKey, 'mutation { rotateWebhookSecret { webhookSecret } }');
    const delivery = await ping(m.keys.test.privateKey);
    expect(delivery.verifies(rotated.data.rotateWebhookSecret.webhookSecret)).toBe(true);
    expect(delivery.verifies(m.webhookSecret)).toBe(false);

    expect((await gql(m.keys.live.publicKey, 'mutation { rotateWebhookSecret { webhookSecret } }')).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql(m.keys.test.publicKey, 'mutation { rotateWebhookSecret { webhookSecret } }')).errors[0].extensions.code).toBe('FORBIDDEN');
    for (const overlap of [-1, 604_801]) {
      const r = await gql(m.keys.live.privateKey, `mutation { rotateWebhookSecret(overlapSeconds: ${overlap}) { webhookSecret } }`);
      expect(r.errors[0].extensions.code).toBe('VAL400');
    }
  });

  it('signs each environment with its own secret and marks each payload live or not; a test rotation leaves live alone', async () => {
    const m = await createTestMerchant(t, { webhookUrl: receiver.url });
    expect(m.liveWebhookSecret).not.toBe(m.webhookSecret);
    const set = await gql(m.keys.live.privateKey, `mutation { setWebhookUrl(url: "${receiver.url}") { webhookUrl } }`);
    expect(set.errors).toBeUndefined();

    const test = await ping(m.keys.test.privateKey);
    expect(test.livemode).toBe(false);
    expect(test.verifies(m.webhookSecret)).toBe(true);
    // A holder of test keys cannot produce (or replay) anything a live receiver accepts.
    expect(test.verifies(m.liveWebhookSecret)).toBe(false);

    const live = await ping(m.keys.live.privateKey);
    expect(live.livemode).toBe(true);
    expect(live.verifies(m.liveWebhookSecret)).toBe(true);
    expect(live.verifies(m.webhookSecret)).toBe(false);

    const rotated = await gql(m.keys.test.privateKey, 'mutation { rotateWebhookSecret { webhookSecret } }');
    expect((await ping(m.keys.test.privateKey)).verifies(rotated.data.rotateWebhookSecret.webhookSecret)).toBe(true);
    const liveAfter = await ping(m.keys.live.privateKey);
    expect(liveAfter.verifies(m.liveWebhookSecret)).toBe(true);
    expect(liveAfter.verifies(rotated.data.rotateWebhookSecret.webhookSecret)).toBe(false);
  });

  it('a merchant from before per-environment secrets keeps its secret for live and gets a new test one when first needed', async () => {
    const m = await createTestMerchant(t, { webhookUrl: receiver.url });
    await gql(m.keys.live.privateKey, `mutation { setWebhookUrl(url: "${receiver.url}") { webhookUrl } }`);
    const { orm, services } = t.service.runtime.ctx;
    // As the migration leaves every existing merchant: its one secret in the live column, no test secret.
    await orm.em.getConnection().execute('update subsidiary set test_webhook_secret_sealed = null where id = ?', [m.subsidiary.id]);

    expect((await ping(m.keys.live.privateKey)).verifies(m.liveWebhookSecret)).toBe(true);
    const test = await ping(m.keys.test.privateKey);
    expect(test.verifies(m.liveWebhookSecret)).toBe(false);
    const made = await services.signingSecrets.current(m.subsidiary.id, 'test');
    expect(made).toMatch(/^whsec_/);
    expect(test.verifies(made)).toBe(true);
    // Made once: later deliveries use the same one.
    expect((await ping(m.keys.test.privateKey)).verifies(made)).toBe(true);
  });
});
