import { startTestService, type TestService } from '../../support/service';
import { graphql, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { WsSession } from './ws-session';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const EXPIRED = 'This api-key has expired: use the keys that replaced it.';
const LINKS = '{ paymentLinks(first: 1) { totalCount } }';

describe('an expired api-key over GraphQL says it expired', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let newPrivateKey: string;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
    const { services } = t.service.runtime.ctx;
    const rotated = await services.merchants.rotateKeys(await services.auth.authenticate(m.keys.test.privateKey), ['public', 'private'], 0);
    newPrivateKey = rotated.privateKey!;
  });
  afterAll(async () => {
    await t.close();
  });

  it('answers UNAUTHENTICATED with the expiry named over HTTP, for either replaced key', async () => {
    for (const key of [m.keys.test.privateKey, m.keys.test.publicKey]) {
      const res = await graphql(t.baseUrl, LINKS, {}, { 'api-key': key });
      expect(res.body).toEqual({
        data: null,
        errors: [expect.objectContaining({ message: EXPIRED, extensions: { code: 'UNAUTHENTICATED', kind: 'unauthenticated' } })],
      });
    }
    // The keys that replaced them work; an unknown key is not called expired.
    expect((await graphql(t.baseUrl, LINKS, {}, { 'api-key': newPrivateKey })).body.errors).toBeUndefined();
    const unknown = await graphql(t.baseUrl, LINKS, {}, { 'api-key': `${m.keys.test.privateKey.slice(0, -4)}AAAA` });
    expect(unknown.body.errors[0]).toMatchObject({ message: 'api-key was not passed in the header.', extensions: { code: 'UNAUTHENTICATED' } });
  });

  it('keeps the legacy wording on the REST shim', async () => {
    const res = await request(t.baseUrl, 'GET', '/checkout/links/all', { apiKey: m.keys.test.privateKey });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ status: 'failed', statusCode: '401', message: 'api-key was not passed in the header.' });
  });

  it('closes a WebSocket opened with an expired key with 4403, saying why', async () => {
    const s = await WsSession.open(t.baseUrl, { 'api-key': m.keys.test.publicKey });
    expect(await s.closed).toEqual({ code: 4403, reason: EXPIRED });
    expect(s.messages).toEqual([]);
  });
});
