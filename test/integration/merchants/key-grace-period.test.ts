import 'reflect-metadata';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { request } from '../../support/http';
import { ownerOf, signInMember } from '../../support/members';
import type { DomainError } from '../../../src/shared/errors';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const ROTATE_PRIVATE = (grace: number) => `mutation { rotateKeys(input: { keys: [PRIVATE], graceSeconds: ${grace} }) { privateKey previousKeysExpireAt } }`;

/** A private key replaced with a grace period still makes calls until it expires, but manages nothing. */
describe('a private key in the grace period of a rotation', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => t.close());

  const gql = async (apiKey: string, query: string, headers: Record<string, string> = {}) =>
    (await request(t.baseUrl, 'POST', '/graphql', { apiKey, body: { query }, headers })).body;

  async function rotatedMerchant(before: (m: CreatedMerchant) => Promise<unknown> = async () => undefined) {
    const m = await createTestMerchant(t);
    await before(m);
    const leaked = m.keys.live.privateKey;
    const rotated = await gql(leaked, ROTATE_PRIVATE(3600));
    expect(rotated.errors).toBeUndefined();
    return { m, leaked, fresh: rotated.data.rotateKeys.privateKey as string };
  }

  it('still makes calls, but cannot rotate keys, rotate the signing secret, set the webhook URL or change settings', async () => {
    const { leaked, fresh } = await rotatedMerchant();
    expect((await gql(leaked, '{ merchant { environment } }')).data.merchant.environment).toBe('LIVE');
    expect((await gql(leaked, '{ apiKeys { kind } }')).data.apiKeys.length).toBeGreaterThan(0);

    for (const mutation of [
      ROTATE_PRIVATE(0),
      'mutation { rotateKeys(input: { keys: [PUBLIC, ENCRYPTION] }) { publicKey } }',
      'mutation { rotateWebhookSecret { webhookSecret } }',
      'mutation { setWebhookUrl(url: "https://attacker.example/hooks") { webhookUrl } }',
      'mutation { setWebhookUrl(url: null) { webhookUrl } }',
      'mutation { updateMerchantSettings(input: { feeBearer: CUSTOMER }) { feeBearer } }',
    ]) {
      const r = await gql(leaked, mutation);
      expect(r.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
      expect(r.errors[0].message).toContain('without an expiry');
    }

    // The merchant's new key was not touched and still manages everything.
    expect((await gql(fresh, '{ merchant { environment } }')).data.merchant.environment).toBe('LIVE');
    expect((await gql(fresh, 'mutation { setWebhookUrl(url: "https://merchant.example/hooks") { webhookUrl } }')).data.setWebhookUrl.webhookUrl).toBe(
      'https://merchant.example/hooks',
    );
    const again = await gql(fresh, ROTATE_PRIVATE(0));
    expect(again.errors).toBeUndefined();
    // The grace key ended with that rotation (grace 0 shortens every earlier expiry).
    expect((await gql(leaked, '{ merchant { environment } }')).errors[0].extensions.code).toBe('UNAUTHENTICATED');
  });

  it("leaves a member's dashboard session managing: the grace period binds the key, not the members", async () => {
    // The owner was invited (with the live key) before the rotation.
    const { m, leaked } = await rotatedMerchant((m) => ownerOf(t.baseUrl, m));
    const session = await signInMember(t.baseUrl, await ownerOf(t.baseUrl, m));
    const sessionGql = async (query: string) => (await request(t.baseUrl, 'POST', '/graphql', { body: { query }, headers: session.headers('live') })).body;
    // The key still reads but may not manage; the owner's session may.
    expect((await gql(leaked, 'mutation { setWebhookUrl(url: null) { webhookUrl } }')).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await sessionGql('mutation { setWebhookUrl(url: "https://merchant.example/hooks") { webhookUrl } }')).data.setWebhookUrl.webhookUrl).toBe(
      'https://merchant.example/hooks',
    );
  });

  it('is decided again inside the transaction: a caller authenticated before the rotation committed is refused after it', async () => {
    const m = await createTestMerchant(t);
    const services = t.service.runtime.ctx.services;
    // Authenticated while the key had no expiry (as a request racing the merchant's rotation would be).
    const stale = await services.auth.authenticate(m.keys.live.privateKey);
    expect(stale.keyExpiresAt).toBeNull();
    expect((await gql(m.keys.live.privateKey, ROTATE_PRIVATE(3600))).errors).toBeUndefined();

    const refusals = await Promise.all([
      services.merchants.rotateKeys(stale, ['private'], 0).catch((e: DomainError) => e.kind),
      services.signingSecrets.rotate(stale, 0).catch((e: DomainError) => e.kind),
      services.webhookEndpoints.setWebhookUrl(stale, 'https://attacker.example/hooks').catch((e: DomainError) => e.kind),
      services.merchants.setFeeBearer(stale, 'customer').catch((e: DomainError) => e.kind),
    ]);
    expect(refusals).toEqual(['forbidden', 'forbidden', 'forbidden', 'forbidden']);
    expect(await services.webhookEndpoints.getWebhookUrl(stale)).toBeNull();
  });
});
