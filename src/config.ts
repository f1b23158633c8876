import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_ENCRYPTION_KEY_BITS, ENCRYPTION_KEY_SIZES, isEncryptionKeyBits, type EncryptionKeyBits } from './crypto/encryption-key';

/** Log levels pino understands; anything else is refused at start. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface Config {
  port: number;
  host: string;
  /** PostgreSQL server URL; undefined selects the embedded database under dataDir. */
  databaseUrl?: string;
  /**
   * DATABASE_READ_URL: a read replica of that server for lists, summaries, timelines and the
   * dashboard (docs/operations.md, "A read replica"); undefined: every read goes to DATABASE_URL.
   */
  databaseReadUrl?: string;
  /** After a caller's write, its reads go to the primary for this long (DATABASE_READ_AFTER_WRITE_MS). */
  databaseReadAfterWriteMs: number;
  /**
   * DATABASE_IDLE_IN_TRANSACTION_MS: the PostgreSQL server ends a session of the service that sat
   * this long inside a transaction without a statement (its locks released); 0: never.
   */
  databaseIdleInTransactionMs: number;
  dataDir: string;
  publicUrl: string;
  adminToken?: string;
  /** METRICS_TOKEN: when set, GET /metrics requires `Authorization: Bearer <token>`. */
  metricsToken?: string;
  /** DEMO_MERCHANT: seed a demo merchant on an empty database at `npm start`; undefined: only on the embedded database. */
  demoMerchant?: boolean;
  migrateOnStart: boolean;
  logLevel: LogLevel;
  /** MASTER_KEY as given (hex or base64 of 32 bytes); undefined means "generate one in dataDir". */
  masterKey?: string;
  /** Largest accepted request body in bytes. */
  bodyLimitBytes: number;
  /** Connections in the pool when on a PostgreSQL server (the embedded database always uses one). */
  databasePoolSize: number;
  /** Delays between webhook attempts (about ten attempts over three days by default). */
  webhookRetryDelaysMs: number[];
  /** How long a receiver has to answer a webhook (10 s by default). */
  webhookTimeoutMs: number;
  /** Webhook requests in flight per instance; 0: this instance delivers none (another one does). */
  webhookConcurrency: number;
  /** Webhook requests in flight per destination (scheme, host, port), across instances: one slow receiver cannot take every worker. */
  webhookEndpointConcurrency: number;
  /** Webhook requests in flight per merchant, across instances: one merchant's share of the dispatcher. */
  webhookMerchantConcurrency: number;
  /** Test pings one environment may request per minute. */
  webhookTestPingsPerMinute: number;
  /** How long a dashboard sign-in lasts, in seconds (DASHBOARD_SESSION_TTL_SECONDS, default 1 hour). */
  dashboardSessionTtlSeconds: number;
  /** Networks (CIDRs) webhooks may reach although they are internal (WEBHOOK_ALLOWED_NETWORKS), e.g. 127.0.0.0/8 for local development. */
  webhookAllowedNetworks: string[];
  /** How often an idle dispatcher looks for due deliveries (retries, expired leases, missed wake-ups). */
  webhookPollIntervalMs: number;
  /** How long a 3-D Secure or PayPal authentication may stay unfinished. */
  authenticationTimeoutMs: number;
  /**
   * PROCESSOR_TIMEOUT_MS: how long a request waits on one processor call (default 30 s, at most
   * 60 s: half the 120 s after which reconciliation closes a key the processor has no record of).
   */
  processorTimeoutMs: number;
  /** AUTHORIZATION_TTL_HOURS: an authorization (captureMethod MANUAL) not captured within this many hours is voided (default 168). */
  authorizationTtlHours: number;
  /** Deprecated (use webhookAllowedNetworks): exempts loopback, private and unique-local networks from the webhook address rule. */
  allowPrivateWebhookUrls: boolean;
  /** How often background jobs run (expiring authentications, subscription charges); 0 disables them. */
  schedulerIntervalMs: number;
  /** How often the dispute job runs (processor notices of disputes opened and decided, deadlines, answers to resend); 0 disables it. */
  disputePollIntervalMs: number;
  /** GraphQL introspection; on by default outside production. */
  graphqlIntrospection: boolean;
  /** Operations (subscriptions, and queries still running) one GraphQL WebSocket may hold at once. */
  maxSubscriptionsPerSocket: number;
  /**
   * REDIS_URL: Redis 7 / Valkey 8 holding the rate-limit counters for every instance and carrying
   * the events between instances (pub/sub instead of NOTIFY); undefined: each instance counts in
   * memory and PostgreSQL carries the events.
   */
  redisUrl?: string;
  /** Rate limits per minute (RATE_LIMIT=off: none of them, and no per-IP connection cap). */
  rateLimit: RateLimitConfig;
  /** Request headers and body must arrive within this; an unfinished request is closed. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open. */
  keepAliveTimeoutMs: number;
  /** Open connections per instance; more are closed at once. */
  maxConnections: number;
  /** Open connections per client IP (0: no cap); lifted by RATE_LIMIT=off. */
  maxConnectionsPerIp: number;
  /** Which proxies' X-Forwarded-For to believe for the client IP (Fastify's trustProxy); false: none. */
  trustProxy: boolean | number | string[];
  /** RSA size of encryption keys issued from now on (ENCRYPTION_KEY_BITS). */
  encryptionKeyBits: EncryptionKeyBits;
  /** Worker threads that decrypt payloads (DECRYPT_THREADS); 0 decrypts on the event loop. */
  decryptThreads: number;
  /**
   * Safety TTL of the per-instance caches of api-keys and tenant settings (TENANT_CACHE_TTL_MS);
   * changes are announced at once through the database, this bounds staleness if one is missed. 0: no caching.
   */
  tenantCacheTtlMs: number;
  /** SMTP_URL: where invitation and password-reset emails go (smtp:// or smtps://); undefined: no email is sent. */
  smtpUrl?: string;
  /** SMTP_FROM: the sender of those emails. */
  smtpFrom: string;
  /** Delays between attempts at one email (EMAIL_RETRY_DELAYS_MS); after the last, the email is given up and audited. */
  emailRetryDelaysMs: number[];
  /** How often an idle email sender looks for due emails queued by other instances (EMAIL_POLL_INTERVAL_MS); 0: this instance sends none. */
  emailPollIntervalMs: number;
  /** Days a sent or given-up team email is kept, for the record, before housekeeping deletes it (EMAIL_OUTBOX_RETENTION_DAYS); 0: kept for ever. */
  emailOutboxRetentionDays: number;
}

export interface RateLimitConfig {
  enabled: boolean;
  /** Requests per minute per api-key. */
  perKey: number;
  /** Requests per minute per client IP without a valid key. */
  perIp: number;
  /** Failed api-key or admin-token attempts per minute per client IP. */
  authFailures: number;
  /** Card payment attempts per minute on one payment link's public page. */
  cardAttemptsPerLink: number;
  /** Card payment attempts per minute from one client IP on payment link pages. */
  cardAttemptsPerIp: number;
  /** Password-reset requests per minute from one client IP. */
  passwordResetsPerIp: number;
  /** Password-reset requests per hour for one email address. */
  passwordResetsPerEmail: number;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** About ten attempts over roughly three days. */
export const DEFAULT_WEBHOOK_RETRY_DELAYS_MS = [
  5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000, 86_400_000,
];

export const MAX_WEBHOOK_RETRIES = 100;
/** Five attempts at an email over about two and a half hours. */
export const DEFAULT_EMAIL_RETRY_DELAYS_MS = [60_000, 300_000, 1_800_000, 7_200_000];

export const MAX_WEBHOOK_RETRY_DELAY_MS = 30 * 24 * 3_600_000;

type Env = Record<string, string | undefined>;

/**
 * Reads and validates the configuration from the environment. Every bad value is reported,
 * not only the first, so an operator fixes them in one go.
 */
export function loadConfig(env: Env = process.env, cwd: string = process.cwd()): Config {
  const problems: string[] = [];
  const value = (name: string): string | undefined => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };

  const integer = (name: string, fallback: number, min: number, max: number): number => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return Number(raw);
  };

  const boolean = (name: string, fallback: boolean): boolean => {
    const raw = value(name);
    if (raw === undefined) return fallback;
    const v = raw.toLowerCase();
    if (['true', '1', 'yes', 'on'].includes(v)) return true;
    if (['false', '0', 'no', 'off'].includes(v)) return false;
    problems.push(`${name} must be true or false (got "${raw}")`);
    return fallback;
  };

  const port = integer('PORT', 4000, 0, 65535);
  const host = value('HOST') ?? '0.0.0.0';

  const isPostgresUrl = (url: string): boolean => {
    try {
      const u = new URL(url);
      return u.protocol === 'postgres:' || u.protocol === 'postgresql:';
    } catch {
      return false;
    }
  };
  const databaseUrl = value('DATABASE_URL');
  if (databaseUrl !== undefined && !isPostgresUrl(databaseUrl)) problems.push('DATABASE_URL must be a postgres:// or postgresql:// URL');
  const databaseReadUrl = value('DATABASE_READ_URL');
  if (databaseReadUrl !== undefined) {
    if (!isPostgresUrl(databaseReadUrl)) problems.push('DATABASE_READ_URL must be a postgres:// or postgresql:// URL');
    // The embedded database is one process's files: there is no replica of it to read from.
    else if (databaseUrl === undefined)
      problems.push('DATABASE_READ_URL needs DATABASE_URL: a read replica follows a PostgreSQL server, and the embedded database (no DATABASE_URL) has none');
  }

  const redisUrl = value('REDIS_URL');
  if (redisUrl !== undefined) {
    let ok = false;
    try {
      const u = new URL(redisUrl);
      ok = (u.protocol === 'redis:' || u.protocol === 'rediss:') && u.hostname !== '';
    } catch {
      ok = false;
    }
    if (!ok) problems.push('REDIS_URL must be a redis:// or rediss:// URL with a host (redis://host:6379)');
  }

  const dataDir = path.resolve(cwd, value('DATA_DIR') ?? '.data');

  let publicUrl = value('PUBLIC_URL') ?? `http://localhost:${port}`;
  try {
    const u = new URL(publicUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('protocol');
    publicUrl = publicUrl.replace(/\/+$/, '');
  } catch {
    problems.push(`PUBLIC_URL must be an http:// or https:// URL (got "${publicUrl}")`);
  }

  const adminToken = value('ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) {
    problems.push('ADMIN_TOKEN must be at least 16 characters long');
  }

  const metricsToken = value('METRICS_TOKEN');
  if (metricsToken !== undefined && (metricsToken.length < 16 || /\s/.test(metricsToken))) {
    problems.push('METRICS_TOKEN must be at least 16 characters long, without spaces');
  }

  const logLevelRaw = (value('LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevelRaw)) {
    problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')} (got "${logLevelRaw}")`);
  }

  const masterKey = value('MASTER_KEY');
  if (masterKey !== undefined && !isMasterKeyShape(masterKey)) {
    problems.push('MASTER_KEY must be 64 hex characters or the base64 of exactly 32 bytes');
  }

  let webhookRetryDelaysMs = DEFAULT_WEBHOOK_RETRY_DELAYS_MS;
  const delaysRaw = value('WEBHOOK_RETRY_DELAYS_MS');
  if (delaysRaw !== undefined) {
    const parts = delaysRaw.split(',').map((p) => p.trim());
    if (parts.some((p) => !/^\d+$/.test(p))) {
      problems.push(`WEBHOOK_RETRY_DELAYS_MS must be comma-separated non-negative integers (got "${delaysRaw}")`);
    } else if (parts.length > MAX_WEBHOOK_RETRIES || parts.some((p) => Number(p) > MAX_WEBHOOK_RETRY_DELAY_MS)) {
      problems.push(`WEBHOOK_RETRY_DELAYS_MS must have at most ${MAX_WEBHOOK_RETRIES} delays of at most ${MAX_WEBHOOK_RETRY_DELAY_MS} ms (30 days) each`);
    } else {
      webhookRetryDelaysMs = parts.map(Number);
    }
  }

  let emailRetryDelaysMs = DEFAULT_EMAIL_RETRY_DELAYS_MS;
  const emailDelaysRaw = value('EMAIL_RETRY_DELAYS_MS');
  if (emailDelaysRaw !== undefined) {
    const parts = emailDelaysRaw.split(',').map((p) => p.trim());
    if (parts.length > 20 || parts.some((p) => !/^\d+$/.test(p) || Number(p) > 24 * 3_600_000)) {
      problems.push(`EMAIL_RETRY_DELAYS_MS must be at most 20 comma-separated delays in ms of at most a day each (got "${emailDelaysRaw}")`);
    } else {
      emailRetryDelaysMs = parts.map(Number);
    }
  }

  const webhookAllowedNetworks: string[] = [];
  const networksRaw = value('WEBHOOK_ALLOWED_NETWORKS');
  if (networksRaw !== undefined) {
    for (const part of networksRaw
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)) {
      if (isCidr(part)) webhookAllowedNetworks.push(part);
      else problems.push(`WEBHOOK_ALLOWED_NETWORKS must be comma-separated networks in CIDR notation such as 127.0.0.0/8 or ::1/128 (got "${part}")`);
    }
  }
  const rateLimit: RateLimitConfig = {
    // `off` (or false, 0, no) switches every limit off, for load tests.
    enabled: boolean('RATE_LIMIT', true),
    perKey: integer('RATE_LIMIT_PER_KEY', 6000, 1, 10_000_000),
    perIp: integer('RATE_LIMIT_PER_IP', 600, 1, 10_000_000),
    authFailures: integer('RATE_LIMIT_AUTH_FAILURES', 30, 1, 1_000_000),
    cardAttemptsPerLink: integer('RATE_LIMIT_CARD_ATTEMPTS_PER_LINK', 60, 1, 1_000_000),
    cardAttemptsPerIp: integer('RATE_LIMIT_CARD_ATTEMPTS_PER_IP', 10, 1, 1_000_000),
    passwordResetsPerIp: integer('RATE_LIMIT_PASSWORD_RESETS_PER_IP', 10, 1, 1_000_000),
    passwordResetsPerEmail: integer('RATE_LIMIT_PASSWORD_RESETS_PER_EMAIL', 5, 1, 1_000_000),
  };
  const smtpUrl = readSmtpUrl(value('SMTP_URL'), problems);
  const smtpFrom = value('SMTP_FROM') ?? `Payments gateway <no-reply@${hostOf(publicUrl)}>`;
  if (!isMailbox(smtpFrom)) problems.push(`SMTP_FROM must be an email address, optionally with a name: "Name <address@host>" (got "${smtpFrom}")`);

  const requestTimeoutMs = integer('REQUEST_TIMEOUT_MS', 30_000, 100, 600_000);
  const trustProxy = readTrustProxy(value('TRUST_PROXY'), problems);
  let encryptionKeyBits = DEFAULT_ENCRYPTION_KEY_BITS;
  const keyBitsRaw = value('ENCRYPTION_KEY_BITS');
  if (keyBitsRaw !== undefined) {
    if (/^\d+$/.test(keyBitsRaw) && isEncryptionKeyBits(Number(keyBitsRaw))) encryptionKeyBits = Number(keyBitsRaw) as EncryptionKeyBits;
    else problems.push(`ENCRYPTION_KEY_BITS must be one of ${ENCRYPTION_KEY_SIZES.join(', ')} (got "${keyBitsRaw}")`);
  }

  const production = env.NODE_ENV === 'production';
  const config: Config = {
    port,
    host,
    databaseUrl,
    databaseReadUrl,
    databaseReadAfterWriteMs: integer('DATABASE_READ_AFTER_WRITE_MS', 5_000, 0, 600_000),
    databaseIdleInTransactionMs: integer('DATABASE_IDLE_IN_TRANSACTION_MS', 60_000, 0, 3_600_000),
    dataDir,
    publicUrl,
    adminToken,
    metricsToken,
    demoMerchant: value('DEMO_MERCHANT') === undefined ? undefined : boolean('DEMO_MERCHANT', false),
    migrateOnStart: boolean('MIGRATE_ON_START', true),
    logLevel: logLevelRaw as LogLevel,
    masterKey,
    bodyLimitBytes: integer('BODY_LIMIT_BYTES', 1_048_576, 1024, 50 * 1_048_576),
    databasePoolSize: integer('DATABASE_POOL_SIZE', 10, 1, 200),
    webhookRetryDelaysMs,
    webhookTimeoutMs: integer('WEBHOOK_TIMEOUT_MS', 10_000, 50, 120_000),
    webhookConcurrency: integer('WEBHOOK_CONCURRENCY', 16, 0, 1000),
    webhookEndpointConcurrency: integer('WEBHOOK_ENDPOINT_CONCURRENCY', 2, 1, 100),
    webhookPollIntervalMs: integer('WEBHOOK_POLL_INTERVAL_MS', 1000, 10, 600_000),
    authenticationTimeoutMs: integer('AUTH_TIMEOUT_MS', 30 * 60_000, 1000, 7 * 24 * 3_600_000),
    processorTimeoutMs: integer('PROCESSOR_TIMEOUT_MS', 30_000, 100, 60_000),
    // Card networks hold an authorization for about a week (up to a month for some cards).
    authorizationTtlHours: integer('AUTHORIZATION_TTL_HOURS', 168, 1, 720),
    allowPrivateWebhookUrls: boolean('ALLOW_PRIVATE_WEBHOOK_URLS', false),
    webhookMerchantConcurrency: 0, // below: its default depends on the two concurrency settings
    webhookTestPingsPerMinute: integer('WEBHOOK_TEST_PINGS_PER_MINUTE', 10, 1, 10_000),
    dashboardSessionTtlSeconds: integer('DASHBOARD_SESSION_TTL_SECONDS', 3600, 60, 86_400),
    webhookAllowedNetworks,
    schedulerIntervalMs: integer('SCHEDULER_INTERVAL_MS', 15_000, 0, 3_600_000),
    disputePollIntervalMs: integer('DISPUTE_POLL_INTERVAL_MS', 2_000, 0, 3_600_000),
    graphqlIntrospection: boolean('GRAPHQL_INTROSPECTION', !production),
    maxSubscriptionsPerSocket: integer('MAX_SUBSCRIPTIONS_PER_SOCKET', 100, 1, 10_000),
    redisUrl,
    rateLimit,
    requestTimeoutMs,
    keepAliveTimeoutMs: integer('KEEP_ALIVE_TIMEOUT_MS', 72_000, 1000, 600_000),
    maxConnections: integer('MAX_CONNECTIONS', 10_000, 1, 1_000_000),
    maxConnectionsPerIp: integer('MAX_CONNECTIONS_PER_IP', 256, 0, 1_000_000),
    trustProxy,
    encryptionKeyBits,
    decryptThreads: integer('DECRYPT_THREADS', os.availableParallelism(), 0, 256),
    tenantCacheTtlMs: integer('TENANT_CACHE_TTL_MS', 5_000, 0, 600_000),
    smtpUrl,
    smtpFrom,
    emailRetryDelaysMs,
    emailPollIntervalMs: integer('EMAIL_POLL_INTERVAL_MS', 5000, 0, 600_000),
    emailOutboxRetentionDays: integer('EMAIL_OUTBOX_RETENTION_DAYS', 30, 0, 3650),
  };
  // Default: a quarter of an instance's workers, and at least one destination's allowance.
  config.webhookMerchantConcurrency = integer(
    'WEBHOOK_MERCHANT_CONCURRENCY',
    Math.max(config.webhookEndpointConcurrency, Math.ceil(config.webhookConcurrency / 4)),
    1,
    1000,
  );
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/** `a.b.c.d/n` or `x::/n`, or a bare address (one host). */
function isCidr(v: string): boolean {
  const [address, prefix, ...rest] = v.split('/');
  const family = address ? net.isIP(address) : 0;
  if (rest.length > 0 || family === 0) return false;
  return prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128));
}

/**
 * TRUST_PROXY: unset or `false` trusts no proxy (the client IP is the socket's peer); `true`
 * trusts every hop; a number trusts that many hops; otherwise a comma-separated list of
 * addresses, CIDR ranges or the names `loopback`, `linklocal`, `uniquelocal`.
 */
function readTrustProxy(raw: string | undefined, problems: string[]): boolean | number | string[] {
  if (raw === undefined) return false;
  const v = raw.toLowerCase();
  if (['false', 'off', 'no', '0'].includes(v)) return false;
  if (['true', 'on', 'yes'].includes(v)) return true;
  if (/^\d{1,2}$/.test(v)) return Number(v);
  const entries = raw
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  const valid = (e: string) => ['loopback', 'linklocal', 'uniquelocal'].includes(e) || isCidr(e);
  if (entries.length === 0 || !entries.every(valid)) {
    problems.push(`TRUST_PROXY must be true, false, a hop count or comma-separated addresses/CIDRs (got "${raw}")`);
    return false;
  }
  return entries;
}

/** SMTP_URL: `smtp://[user:password@]host[:port]` (STARTTLS when the server offers it) or `smtps://…` (TLS from the start). */
function readSmtpUrl(raw: string | undefined, problems: string[]): string | undefined {
  if (raw === undefined) return undefined;
  let ok = false;
  try {
    const u = new URL(raw);
    ok = (u.protocol === 'smtp:' || u.protocol === 'smtps:') && u.hostname !== '' && (u.pathname === '' || u.pathname === '/') && u.search === '';
  } catch {
    ok = false;
  }
  if (ok) return raw;
  // The URL may hold a password: it is not repeated in the message.
  problems.push('SMTP_URL must be an smtp:// or smtps:// URL such as smtp://user:password@mail.example.com:587');
  return undefined;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname || 'localhost';
  } catch {
    return 'localhost';
  }
}

/** `address@host` or `Name <address@host>`, on one line. */
function isMailbox(v: string): boolean {
  if (/[\r\n]/.test(v)) return false;
  const m = /^(?:[^<>]*<([^<>\s]+)>|([^<>\s]+))$/.exec(v.trim());
  const address = m?.[1] ?? m?.[2];
  return address !== undefined && /^[^@\s]+@[^@\s]+$/.test(address);
}

function isMasterKeyShape(v: string): boolean {
  if (/^[0-9a-fA-F]{64}$/.test(v)) return true;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(v)) return false;
  return Buffer.from(v, 'base64').length === 32;
}
