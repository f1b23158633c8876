import { startTestService, TEST_ADMIN_TOKEN, type TestService } from '../support/service';
import { graphql, request } from '../support/http';
import { createTestMerchant } from '../support/merchants';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';

const CREATE_MERCHANT = `
  mutation ($input: CreateMerchantInput!) {
    createMerchant(input: $input) {
      subsidiary { id name country supportEmail }
      webhookSecret
      keys { test { publicKey privateKey encryptionKey } live { publicKey privateKey encryptionKey } }
    }
  }`;

const MERCHANT = `{ merchant { environment encryptionKey subsidiary { id name country supportEmail customization } } }`;

const UNAUTHORIZED_BODY = { status: 'failed', statusCode: '401', message: 'api-key was not passed in the header.' };

describe('merchants and api-keys', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => {
    await t.close();
  });

  describe('createMerchant (admin GraphQL mutation)', () => {
    it('creates a merchant with test and live keys in the documented formats', async () => {
      const res = await graphql(
        t.baseUrl,
        CREATE_MERCHANT,
        { input: { name: 'Acme Stores', country: 'NG', supportEmail: 'support@acme.test', webhookUrl: 'https://acme.test/hooks' } },
        { 'x-admin-token': TEST_ADMIN_TOKEN },
      );
      expect(res.body.errors).toBeUndefined();
      const created = res.body.data.createMerchant;
      expect(created.subsidiary).toEqual({ id: expect.any(Number), name: 'Acme Stores', country: 'NG', supportEmail: 'support@acme.test' });
      expect(created.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(Buffer.from(created.webhookSecret.slice(6), 'base64').length).toBe(24);
      for (const mode of ['test', 'live'] as const) {
        const marker = mode.toUpperCase();
        expect(created.keys[mode].publicKey).toMatch(new RegExp(`^PGW-PUBLICKEY-${marker}-[0-9a-f]{32}$`));
        expect(created.keys[mode].privateKey).toMatch(new RegExp(`^PGW-SECRETKEY-${marker}-[0-9a-f]{32}$`));
        const decoded = Buffer.from(created.keys[mode].encryptionKey, 'base64').toString('utf8');
        expect(decoded).toMatch(/^2048!<RSAKeyValue><Modulus>[A-Za-z0-9+/]+=*<\/Modulus><Exponent>AQAB<\/Exponent><\/RSAKeyValue>$/);
      }
      expect(created.keys.test.encryptionKey).not.toBe(created.keys.live.encryptionKey);
    });

    it('refuses without, or with a wrong, x-admin-token', async () => {
      const input = { name: 'Nope', country: 'NG', supportEmail: 'n@n.test' };
      for (const headers of [{}, { 'x-admin-token': 'wrong-token-wrong-token' }] as Array<Record<string, string>>) {
        const res = await graphql(t.baseUrl, CREATE_MERCHANT, { input }, headers);
        expect(res.body.data).toBeNull();
        expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
      }
    });

    it('refuses an api-key in place of the admin token', async () => {
      const m = await createTestMerchant(t);
      const res = await graphql(
        t.baseUrl,
        CREATE_MERCHANT,
        { input: { name: 'X', country: 'NG', supportEmail: 'x@x.test' } },
        { 'api-key': m.keys.test.privateKey },
      );
      expect(res.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    });

    it.each([
      [{ name: '', country: 'NG', supportEmail: 'a@b.test' }, 'The Name field is required.'],
      [{ name: 'A', country: 'XX', supportEmail: 'a@b.test' }, 'The Country field must be an ISO 3166-1 alpha-2 code.'],
      [{ name: 'A', country: 'NG', supportEmail: 'not-an-email' }, 'The Email field is not a valid e-mail address.'],
      [{ name: 'A', country: 'NG', supportEmail: 'a@b.test', webhookUrl: 'ftp://x' }, 'The WebhookUrl field must be an http or https URL.'],
    ])('validates its input: %j', async (input, message) => {
      const res = await graphql(t.baseUrl, CREATE_MERCHANT, { input }, { 'x-admin-token': TEST_ADMIN_TOKEN });
      expect(res.body.errors[0]).toMatchObject({ message, extensions: { code: 'VAL400' } });
    });
  });

  describe('authentication', () => {
    let a: CreatedMerchant;
    let b: CreatedMerchant;
    beforeAll(async () => {
      [a, b] = await Promise.all([createTestMerchant(t), createTestMerchant(t)]);
    });

    it('accepts each of the four api-keys and resolves merchant and environment', async () => {
      for (const [key, environment] of [
        [a.keys.test.publicKey, 'TEST'],
        [a.keys.test.privateKey, 'TEST'],
        [a.keys.live.publicKey, 'LIVE'],
        [a.keys.live.privateKey, 'LIVE'],
      ] as const) {
        const res = await graphql(t.baseUrl, MERCHANT, {}, { 'api-key': key });
        expect(res.body.errors).toBeUndefined();
        expect(res.body.data.merchant).toEqual({
          environment,
          encryptionKey: environment === 'TEST' ? a.keys.test.encryptionKey : a.keys.live.encryptionKey,
          subsidiary: { ...a.subsidiary, customization: null },
        });
        const rest = await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey: key });
        expect(rest.status).toBe(200);
      }
    });

    it("never shows one merchant's data with another's key", async () => {
      const res = await graphql(t.baseUrl, MERCHANT, {}, { 'api-key': b.keys.test.publicKey });
      expect(res.body.data.merchant.subsidiary.id).toBe(b.subsidiary.id);
      expect(res.body.data.merchant.subsidiary.id).not.toBe(a.subsidiary.id);
    });

    it.each([
      ['missing', undefined],
      ['empty', ''],
      ['malformed', 'hello'],
      ['well-formed but unknown', 'PGW-PUBLICKEY-TEST-00000000000000000000000000000000'],
      ['with the markers changed', 'swap'],
    ])('answers 401 in the error shape for a %s key', async (_label, key) => {
      const apiKey = key === 'swap' ? a.keys.test.publicKey.replace('TEST', 'LIVE') : key;
      const res = await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHORIZED_BODY);
      const gql = await graphql(t.baseUrl, MERCHANT, {}, apiKey === undefined ? {} : { 'api-key': apiKey });
      expect(gql.body.errors[0]).toMatchObject({ message: 'api-key was not passed in the header.', extensions: { code: 'UNAUTHENTICATED' } });
    });

    it('needs no key for the GraphQL health query only', async () => {
      const res = await graphql(t.baseUrl, '{ health }');
      expect(res.body).toEqual({ data: { health: 'ok' } });
    });

    it('stores private keys only as hashes and RSA private keys only sealed', async () => {
      const conn = t.service.runtime.ctx.orm.em.getConnection();
      const dump = JSON.stringify(
        await conn.execute(
          `select k.*, e.encryption_key as enc, e.private_key_sealed, s.webhook_secret_sealed
             from api_key k join encryption_key e on e.environment_id = k.environment_id
             join app_environment ae on ae.id = k.environment_id join subsidiary s on s.id = ae.subsidiary_id
            where ae.subsidiary_id = ?`,
          [a.subsidiary.id],
        ),
      );
      for (const secret of [a.keys.test.privateKey, a.keys.live.privateKey, a.keys.test.publicKey, a.webhookSecret]) {
        expect(dump).not.toContain(secret);
        expect(dump).not.toContain(secret.slice(-32));
      }
      expect(dump).not.toContain('PRIVATE KEY');
      expect(dump).toMatch(/"private_key_sealed":"v1\./);
    });
  });

  describe('key rotation', () => {
    const ROTATE = `mutation ($input: RotateKeysInput!) { rotateKeys(input: $input) { publicKey privateKey encryptionKey previousKeysExpireAt } }`;

    it('replaces the private key at once and leaves the public key working', async () => {
      const m = await createTestMerchant(t);
      const res = await graphql(t.baseUrl, ROTATE, { input: { keys: ['PRIVATE'] } }, { 'api-key': m.keys.test.privateKey });
      expect(res.body.errors).toBeUndefined();
      const rotated = res.body.data.rotateKeys;
      expect(rotated.privateKey).toMatch(/^PGW-SECRETKEY-TEST-[0-9a-f]{32}$/);
      expect(rotated.publicKey).toBeNull();
      expect(rotated.encryptionKey).toBeNull();

      const old = await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey: m.keys.test.privateKey });
      expect(old.status).toBe(401);
      expect((await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey: rotated.privateKey })).status).toBe(200);
      expect((await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey: m.keys.test.publicKey })).status).toBe(200);
      // The live environment is untouched.
      expect((await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey: m.keys.live.privateKey })).status).toBe(200);
    });

    it('keeps replaced keys working during a grace period', async () => {
      const m = await createTestMerchant(t);
      const res = await graphql(t.baseUrl, ROTATE, { input: { keys: ['PUBLIC', 'ENCRYPTION'], graceSeconds: 3600 } }, { 'api-key': m.keys.test.privateKey });
      const rotated = res.body.data.rotateKeys;
      expect(rotated.publicKey).toMatch(/^PGW-PUBLICKEY-TEST-/);
      expect(rotated.encryptionKey).not.toBe(m.keys.test.encryptionKey);
      expect(new Date(rotated.previousKeysExpireAt).getTime()).toBeGreaterThan(Date.now() + 3500_000);
      expect((await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey: m.keys.test.publicKey })).status).toBe(200);
      expect((await request(t.baseUrl, 'GET', '/checkout/banks', { apiKey: rotated.publicKey })).status).toBe(200);
      const merchant = await graphql(t.baseUrl, MERCHANT, {}, { 'api-key': rotated.publicKey });
      expect(merchant.body.data.merchant.encryptionKey).toBe(rotated.encryptionKey);
    });

    it('refuses rotation with a public key', async () => {
      const m = await createTestMerchant(t);
      const res = await graphql(t.baseUrl, ROTATE, { input: { keys: ['PRIVATE'] } }, { 'api-key': m.keys.test.publicKey });
      expect(res.body.errors[0]).toMatchObject({ message: 'This operation requires the private key.', extensions: { code: 'FORBIDDEN' } });
    });
  });
});
