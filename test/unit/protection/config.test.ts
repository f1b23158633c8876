import { ConfigError, loadConfig } from '../../../src/config';

describe('protection configuration', () => {
  it('has the documented defaults', () => {
    const c = loadConfig({});
    expect(c.rateLimit).toEqual({
      enabled: true,
      perKey: 6000,
      perIp: 600,
      authFailures: 30,
      cardAttemptsPerLink: 60,
      cardAttemptsPerIp: 10,
      passwordResetsPerIp: 10,
      passwordResetsPerEmail: 5,
    });
    expect(c.requestTimeoutMs).toBe(30_000);
    expect(c.keepAliveTimeoutMs).toBe(72_000);
    expect(c.maxConnections).toBe(10_000);
    expect(c.maxConnectionsPerIp).toBe(256);
    expect(c.trustProxy).toBe(false);
  });

  it('reads every variable', () => {
    const c = loadConfig({
      RATE_LIMIT: 'OFF',
      RATE_LIMIT_PER_KEY: '100',
      RATE_LIMIT_PER_IP: '50',
      RATE_LIMIT_AUTH_FAILURES: '5',
      RATE_LIMIT_CARD_ATTEMPTS_PER_LINK: '7',
      RATE_LIMIT_CARD_ATTEMPTS_PER_IP: '3',
      RATE_LIMIT_PASSWORD_RESETS_PER_IP: '4',
      RATE_LIMIT_PASSWORD_RESETS_PER_EMAIL: '2',
      REQUEST_TIMEOUT_MS: '5000',
      KEEP_ALIVE_TIMEOUT_MS: '4000',
      MAX_CONNECTIONS: '100',
      MAX_CONNECTIONS_PER_IP: '0',
      TRUST_PROXY: '10.0.0.0/8, loopback',
    });
    expect(c.rateLimit).toEqual({
      enabled: false,
      perKey: 100,
      perIp: 50,
      authFailures: 5,
      cardAttemptsPerLink: 7,
      cardAttemptsPerIp: 3,
      passwordResetsPerIp: 4,
      passwordResetsPerEmail: 2,
    });
    expect([c.requestTimeoutMs, c.keepAliveTimeoutMs, c.maxConnections, c.maxConnectionsPerIp]).toEqual([5000, 4000, 100, 0]);
    expect(c.trustProxy).toEqual(['10.0.0.0/8', 'loopback']);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ RATE_LIMIT: 'false' }).rateLimit.enabled).toBe(false);
    expect(loadConfig({ RATE_LIMIT: 'on' }).rateLimit.enabled).toBe(true);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
  });

  it('refuses bad values, all at once', () => {
    let error: unknown;
    try {
      loadConfig({ RATE_LIMIT: 'maybe', RATE_LIMIT_PER_IP: '0', REQUEST_TIMEOUT_MS: 'soon', TRUST_PROXY: '10.0.0.0/40' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toHaveLength(4);
  });

  it('counts in memory without REDIS_URL, and reads a redis:// or rediss:// REDIS_URL', () => {
    expect(loadConfig({}).redisUrl).toBeUndefined();
    expect(loadConfig({ REDIS_URL: 'redis://cache:6379/2' }).redisUrl).toBe('redis://cache:6379/2');
    expect(loadConfig({ REDIS_URL: ' rediss://:secret@cache.internal:6380 ' }).redisUrl).toBe('rediss://:secret@cache.internal:6380');
  });

  it('refuses a REDIS_URL that is not a redis:// or rediss:// URL with a host, without repeating it (it may hold a password)', () => {
    for (const bad of ['cache:6379', 'http://cache:6379', 'redis://', 'postgres://u:hunter2@db/x']) {
      let error: unknown;
      try {
        loadConfig({ REDIS_URL: bad });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as ConfigError).problems).toEqual(['REDIS_URL must be a redis:// or rediss:// URL with a host (redis://host:6379)']);
    }
  });
});
