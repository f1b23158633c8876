import { ConfigError, loadConfig } from '../../../src/config';

describe('webhook configuration', () => {
  it('reads WEBHOOK_ALLOWED_NETWORKS as CIDRs, none by default', () => {
    expect(loadConfig({}).webhookAllowedNetworks).toEqual([]);
    expect(loadConfig({ WEBHOOK_ALLOWED_NETWORKS: ' 127.0.0.0/8, ::1/128,10.1.2.3 ' }).webhookAllowedNetworks).toEqual(['127.0.0.0/8', '::1/128', '10.1.2.3']);
    // The deprecated ALLOW_PRIVATE_WEBHOOK_URLS still parses.
    expect(loadConfig({ ALLOW_PRIVATE_WEBHOOK_URLS: 'true' }).allowPrivateWebhookUrls).toBe(true);
  });

  it.each(['localhost', '127.0.0.0/33', '::/129', '10.0.0.0/8/8', 'example.com/24'])('refuses WEBHOOK_ALLOWED_NETWORKS=%s at start', (bad) => {
    let error: unknown;
    try {
      loadConfig({ WEBHOOK_ALLOWED_NETWORKS: `127.0.0.0/8,${bad}` });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([expect.stringContaining(`WEBHOOK_ALLOWED_NETWORKS must be comma-separated networks in CIDR notation`)]);
  });

  it('gives each merchant a share of the dispatcher and limits test pings', () => {
    expect(loadConfig({})).toMatchObject({
      webhookConcurrency: 16,
      webhookEndpointConcurrency: 2,
      webhookMerchantConcurrency: 4,
      webhookTestPingsPerMinute: 10,
    });
    expect(loadConfig({ WEBHOOK_CONCURRENCY: '4' }).webhookMerchantConcurrency).toBe(2);
    expect(loadConfig({ WEBHOOK_CONCURRENCY: '0' }).webhookMerchantConcurrency).toBe(2);
    expect(loadConfig({ WEBHOOK_MERCHANT_CONCURRENCY: '7', WEBHOOK_TEST_PINGS_PER_MINUTE: '3' })).toMatchObject({
      webhookMerchantConcurrency: 7,
      webhookTestPingsPerMinute: 3,
    });
    expect(() => loadConfig({ WEBHOOK_MERCHANT_CONCURRENCY: '0' })).toThrow(/WEBHOOK_MERCHANT_CONCURRENCY must be an integer from 1/);
    expect(() => loadConfig({ WEBHOOK_TEST_PINGS_PER_MINUTE: 'many' })).toThrow(/WEBHOOK_TEST_PINGS_PER_MINUTE must be an integer/);
  });
});
