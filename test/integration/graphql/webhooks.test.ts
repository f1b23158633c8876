import http from 'node:http';
import { startTestService, type TestService } from '../../support/service';
import { graphql } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

/** The webhook operations of the dashboard API, against a receiver on loopback. */
describe('GraphQL: webhooks', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let receiver: http.Server;
  let receiverUrl: string;
  const received: Array<{ headers: http.IncomingHttpHeaders; body: string }> = [];
  const answer = 200;
  beforeAll(async () => {
    // The receiver is on loopback: exempted, as for local development.
    t = await startTestService({ WEBHOOK_ALLOWED_NETWORKS: '127.0.0.0/8' });
    m = await createTestMerchant(t);
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.statusCode = answer;
        res.end('ok');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
  });
  afterAll(async () => {
    await new Promise((r) => receiver.close(r));
    await t.close();
  });

  const gql = async (query: string, variables: Record<string, unknown> = {}, apiKey = m.keys.test.privateKey) =>
    (await graphql(t.baseUrl, query, variables, { 'api-key': apiKey })).body;
  const DELIVERY = 'id eventId notify notifyType orderReference url state attemptCount attempts { statusCode latencyMs error }';

  it('sets the webhook URL with the private key only', async () => {
    const SET = `mutation ($url: String) { setWebhookUrl(url: $url) { webhookUrl } }`;
    expect((await gql(SET, { url: receiverUrl }, m.keys.test.publicKey)).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql(SET, { url: 'ftp://nope' })).errors[0].extensions.code).toBe('VAL400');
    expect((await gql(SET, { url: receiverUrl })).data.setWebhookUrl).toEqual({ webhookUrl: receiverUrl });
    // The URL may carry a secret path: reading it needs the private key too.
    expect((await gql('{ webhookSettings { webhookUrl } }', {}, m.keys.test.publicKey)).errors[0].extensions.code).toBe('FORBIDDEN');
    expect((await gql('{ webhookSettings { webhookUrl } }', {}, m.keys.test.privateKey)).data.webhookSettings).toEqual({ webhookUrl: receiverUrl });
    expect((await gql('{ webhookSettings { webhookUrl } }', {}, m.keys.live.privateKey)).data.webhookSettings).toEqual({ webhookUrl: null });
  });

  it('sends a test ping, shows its attempts, and redelivers it with the same eventId', async () => {
    const ping = await gql(`mutation { sendTestWebhook { ${DELIVERY} } }`);
    expect(ping.errors).toBeUndefined();
    expect(ping.data.sendTestWebhook).toMatchObject({ notify: 'test_assess', url: receiverUrl, state: 'pending', attemptCount: 0, attempts: [] });
    const eventId = ping.data.sendTestWebhook.eventId;

    await t.service.runtime.ctx.services.webhooks.runOnce();
    const delivered = received.find((r) => r.headers['webhook-id'] === eventId);
    expect(delivered).toBeDefined();
    expect(JSON.parse(delivered!.body)).toMatchObject({ notify: 'test_assess', eventId });

    const list = await gql(`query ($eventId: String) { webhookDeliveries(eventId: $eventId) { ${DELIVERY} } }`, { eventId });
    expect(list.errors).toBeUndefined();
    expect(list.data.webhookDeliveries).toEqual([
      expect.objectContaining({ eventId, state: 'delivered', attemptCount: 1, attempts: [expect.objectContaining({ statusCode: 200, error: null })] }),
    ]);

    const again = await gql(`mutation ($eventId: String!) { redeliverWebhook(eventId: $eventId) { ${DELIVERY} } }`, { eventId });
    expect(again.data.redeliverWebhook).toMatchObject({ eventId, state: 'pending' });
    await t.service.runtime.ctx.services.webhooks.runOnce();
    expect(received.filter((r) => r.headers['webhook-id'] === eventId)).toHaveLength(2);
  });

  it("answers 13 for another tenant's event", async () => {
    const ping = await gql(`mutation { sendTestWebhook { eventId } }`);
    const other = await createTestMerchant(t);
    const res = await gql(
      `mutation ($eventId: String!) { redeliverWebhook(eventId: $eventId) { id } }`,
      { eventId: ping.data.sendTestWebhook.eventId },
      other.keys.test.privateKey,
    );
    expect(res.errors[0].extensions.code).toBe('13');
  });
});
