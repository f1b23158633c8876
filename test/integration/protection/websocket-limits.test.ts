import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { WsSession } from '../graphql/ws-session';

/** Operations over an open WebSocket count against the socket's api-key like HTTP requests. */
describe('rate limits over an open GraphQL WebSocket', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ RATE_LIMIT: 'on', RATE_LIMIT_PER_KEY: '5' });
  });
  afterAll(async () => {
    await t.close();
  });

  it('operations sent over one socket beyond the per-key limit get RATE_LIMITED, and the socket stays usable', async () => {
    const m = await createTestMerchant(t);
    const session = await WsSession.open(t.baseUrl, { 'api-key': m.keys.test.privateKey });
    try {
      const results = [];
      for (let i = 1; i <= 8; i += 1) {
        session.subscribe(`q${i}`, '{ __typename }');
        results.push(await session.result(`q${i}`));
      }
      const limited = results.filter((r) => r.type === 'error' && r.payload?.[0]?.extensions?.code === 'RATE_LIMITED');
      const answered = results.filter((r) => r.type === 'next');
      expect(answered.length).toBeLessThanOrEqual(5);
      expect(limited.length).toBeGreaterThanOrEqual(3);
      expect(limited[0]!.payload[0].extensions.retryAfterSeconds).toBeGreaterThan(0);
      expect(session.isOpen).toBe(true);
    } finally {
      session.close();
    }
  });
});
