import path from 'node:path';
import { ConfigError, DEFAULT_WEBHOOK_RETRY_DELAYS_MS, loadConfig } from '../../src/config';

describe('loadConfig', () => {
  it('applies the documented defaults on an empty environment', () => {
    const config = loadConfig({}, '/srv/app');
    expect(config).toMatchObject({
      port: 4000,
      host: '0.0.0.0',
      databaseUrl: undefined,
      dataDir: path.resolve('/srv/app', '.data'),
      publicUrl: 'http://localhost:4000',
      adminToken: undefined,
      migrateOnStart: true,
      logLevel: 'info',
      masterKey: undefined,
      webhookRetryDelaysMs: DEFAULT_WEBHOOK_RETRY_DELAYS_MS,
    });
  });

  it('defaults PUBLIC_URL to the configured port and strips a trailing slash', () => {
    expect(loadConfig({ PORT: '8080' }).publicUrl).toBe('http://localhost:8080');
    expect(loadConfig({ PUBLIC_URL: 'https://pay.example.com/' }).publicUrl).toBe('https://pay.example.com');
  });

  it('reads every documented variable', () => {
    const config = loadConfig({
      PORT: '5000',
      HOST: '127.0.0.1',
      DATABASE_URL: 'postgres://u@db:5432/app',
      DATA_DIR: '/var/lib/pgw',
      PUBLIC_URL: 'https://pay.example.com',
      ADMIN_TOKEN: 'a-long-enough-admin-token',
      MIGRATE_ON_START: 'false',
      LOG_LEVEL: 'DEBUG',
      MASTER_KEY: 'ab'.repeat(32),
      WEBHOOK_RETRY_DELAYS_MS: '10, 20,30',
    });
    expect(config).toMatchObject({
      port: 5000,
      host: '127.0.0.1',
      databaseUrl: 'postgres://u@db:5432/app',
      dataDir: '/var/lib/pgw',
      publicUrl: 'https://pay.example.com',
      adminToken: 'a-long-enough-admin-token',
      migrateOnStart: false,
      logLevel: 'debug',
      masterKey: 'ab'.repeat(32),
      webhookRetryDelaysMs: [10, 20, 30],
    });
  });

  it('accepts a base64 master key of 32 bytes', () => {
    const key = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ MASTER_KEY: key }).masterKey).toBe(key);
  });

  it('reports every bad value at once, each with a clear message', () => {
    let error: unknown;
    try {
      loadConfig({
        PORT: 'eighty',
        DATABASE_URL: 'mysql://x',
        PUBLIC_URL: 'ftp://x',
        ADMIN_TOKEN: 'short',
        MIGRATE_ON_START: 'maybe',
        LOG_LEVEL: 'loud',
        MASTER_KEY: 'abc',
        WEBHOOK_RETRY_DELAYS_MS: '1,x',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems).toEqual([
      'PORT must be an integer from 0 to 65535 (got "eighty")',
      'DATABASE_URL must be a postgres:// or postgresql:// URL',
      'PUBLIC_URL must be an http:// or https:// URL (got "ftp://x")',
      'ADMIN_TOKEN must be at least 16 characters long',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
      'MASTER_KEY must be 64 hex characters or the base64 of exactly 32 bytes',
      'WEBHOOK_RETRY_DELAYS_MS must be comma-separated non-negative integers (got "1,x")',
      'MIGRATE_ON_START must be true or false (got "maybe")',
    ]);
    expect((error as Error).message).toContain('Invalid configuration:');
  });

  it('reads SMTP_URL and SMTP_FROM; without SMTP_URL no email is configured', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://pay.example.com' })).toMatchObject({
      smtpUrl: undefined,
      smtpFrom: 'Payments gateway <no-reply@pay.example.com>',
    });
    expect(loadConfig({ SMTP_URL: 'smtp://user:p%40ss@mail.example.com:587', SMTP_FROM: 'Acme Pay <pay@acme.test>' })).toMatchObject({
      smtpUrl: 'smtp://user:p%40ss@mail.example.com:587',
      smtpFrom: 'Acme Pay <pay@acme.test>',
    });
    expect(loadConfig({ SMTP_URL: 'smtps://mail.example.com', SMTP_FROM: 'pay@acme.test' })).toMatchObject({ smtpUrl: 'smtps://mail.example.com' });
  });

  it('refuses a malformed SMTP_URL without repeating its password, and a malformed SMTP_FROM', () => {
    for (const url of ['http://user:hunter2@mail.example.com', 'smtp://', 'mail.example.com:25', 'smtp://user:hunter2@mail.example.com/path?x=1']) {
      let error: unknown;
      try {
        loadConfig({ SMTP_URL: url });
      } catch (err) {
        error = err;
      }
      expect((error as ConfigError).problems).toEqual(['SMTP_URL must be an smtp:// or smtps:// URL such as smtp://user:password@mail.example.com:587']);
      expect((error as Error).message).not.toContain('hunter2');
    }
    expect(() => loadConfig({ SMTP_FROM: 'not an address' })).toThrow('SMTP_FROM must be an email address');
    expect(() => loadConfig({ SMTP_FROM: 'Pay <pay@acme.test>\r\nBcc: x@y.z' })).toThrow('SMTP_FROM must be an email address');
  });

  it('reads and bounds the webhook delivery settings', () => {
    expect(loadConfig({})).toMatchObject({
      webhookTimeoutMs: 10_000,
      webhookConcurrency: 16,
      webhookEndpointConcurrency: 2,
      webhookPollIntervalMs: 1000,
      allowPrivateWebhookUrls: false,
    });
    expect(
      loadConfig({
        WEBHOOK_TIMEOUT_MS: '500',
        WEBHOOK_CONCURRENCY: '0',
        WEBHOOK_ENDPOINT_CONCURRENCY: '4',
        WEBHOOK_POLL_INTERVAL_MS: '50',
        ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
      }),
    ).toMatchObject({ webhookTimeoutMs: 500, webhookConcurrency: 0, webhookEndpointConcurrency: 4, webhookPollIntervalMs: 50, allowPrivateWebhookUrls: true });
    let error: unknown;
    try {
      loadConfig({ WEBHOOK_TIMEOUT_MS: '0', WEBHOOK_ENDPOINT_CONCURRENCY: '0', WEBHOOK_RETRY_DELAYS_MS: String(31 * 24 * 3_600_000) });
    } catch (err) {
      error = err;
    }
    expect((error as ConfigError).problems).toEqual([
      'WEBHOOK_RETRY_DELAYS_MS must have at most 100 delays of at most 2592000000 ms (30 days) each',
      'WEBHOOK_TIMEOUT_MS must be an integer from 50 to 120000 (got "0")',
      'WEBHOOK_ENDPOINT_CONCURRENCY must be an integer from 1 to 100 (got "0")',
    ]);
  });

  it('voids uncaptured authorizations after 168 hours unless AUTHORIZATION_TTL_HOURS says otherwise, and refuses a value out of range', () => {
    expect(loadConfig({}).authorizationTtlHours).toBe(168);
    expect(loadConfig({ AUTHORIZATION_TTL_HOURS: '24' }).authorizationTtlHours).toBe(24);
    for (const bad of ['0', '721', '1.5', 'week']) {
      expect(() => loadConfig({ AUTHORIZATION_TTL_HOURS: bad })).toThrow(`AUTHORIZATION_TTL_HOURS must be an integer from 1 to 720 (got "${bad}")`);
    }
  });

  it('refuses a port out of range', () => {
    expect(() => loadConfig({ PORT: '70000' })).toThrow('PORT must be an integer from 0 to 65535');
  });
});
