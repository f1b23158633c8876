import 'reflect-metadata';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { loadConfig, type Config } from '../../src/config';
import { createService, type Service } from '../../src/bootstrap';
import type { Clock } from '../../src/shared/clock';
import { TEST_DATABASE_URL, TEST_MASTER_KEY } from './database';
import { freePort } from './scratch-database';

export interface TestService {
  service: Service;
  baseUrl: string;
  config: Config;
  close(): Promise<void>;
}

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';

/** The real service on the test PostgreSQL, listening on a free loopback port. */
export async function startTestService(env: Record<string, string> = {}, options: { clock?: Clock; logger?: unknown } = {}): Promise<TestService> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-test-'));
  const port = await freePort();
  const config = loadConfig({
    PORT: String(port),
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: TEST_DATABASE_URL,
    DATA_DIR: dataDir,
    MASTER_KEY: TEST_MASTER_KEY,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    MIGRATE_ON_START: 'false',
    DATABASE_POOL_SIZE: '4',
    LOG_LEVEL: 'silent',
    SCHEDULER_INTERVAL_MS: '0',
    DISPUTE_POLL_INTERVAL_MS: '0',
    // Test files share one database and some run on a hand-moved clock: no background webhook
    // delivery unless a test asks for it (test/integration/events), or calls webhooks.runOnce().
    WEBHOOK_CONCURRENCY: '0',
    // Emails (with SMTP_URL) are sent at once by the instance that queued them; one retry, at
    // once; a rare poll, so that a test's service seldom sends another file's queued email.
    EMAIL_RETRY_DELAYS_MS: '0',
    EMAIL_POLL_INTERVAL_MS: '60000',
    // 4096-bit keys (the default) take about a second each to generate: most tests use 2048,
    // the tests about key sizes ask for 4096 explicitly.
    ENCRYPTION_KEY_BITS: '2048',
    ...env,
  });
  const service = await createService(config, { clock: options.clock, logger: (options.logger as never) ?? false });
  await service.app.listen({ port: config.port, host: '127.0.0.1' });
  const baseUrl = config.publicUrl;
  return {
    service,
    baseUrl,
    config,
    async close() {
      await service.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
