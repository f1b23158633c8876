import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { openRuntime } from '../../src/bootstrap';
import { TEST_MASTER_KEY } from './database';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';
import type { FeeBearer } from '../../src/merchants/app-environment.entity';
import type { TestService } from './service';

let counter = 0;

/**
 * A fresh merchant through the domain service, as the CLI or the admin mutation make them. It
 * bears the processing fee itself unless `feeBearer` says otherwise (new merchants default to the
 * customer): the suite's fee arithmetic was written for the merchant bearing it.
 */
export function createTestMerchant(
  t: TestService,
  overrides: Partial<{ name: string; webhookUrl: string; keyBits: number; feeBearer: FeeBearer }> = {},
): Promise<CreatedMerchant> {
  counter += 1;
  return t.service.runtime.ctx.services.merchants.createMerchant({
    name: overrides.name ?? `Test Merchant ${process.pid}-${counter}`,
    country: 'NG',
    supportEmail: `support${counter}@merchant.test`,
    webhookUrl: overrides.webhookUrl,
    keyBits: overrides.keyBits,
    feeBearer: overrides.feeBearer ?? 'merchant',
  });
}

/** A fresh merchant in another database (a scratch database a child process serves), through a runtime opened for it alone. */
export async function createMerchantIn(databaseUrl: string, name = `Test Merchant ${process.pid}-${++counter}`): Promise<CreatedMerchant> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-merchant-'));
  const runtime = await openRuntime(
    loadConfig({
      DATABASE_URL: databaseUrl,
      MASTER_KEY: TEST_MASTER_KEY,
      DATA_DIR: dataDir,
      MIGRATE_ON_START: 'false',
      LOG_LEVEL: 'silent',
      ENCRYPTION_KEY_BITS: '2048',
      DECRYPT_THREADS: '0',
      DATABASE_POOL_SIZE: '2',
    }),
  );
  try {
    return await runtime.ctx.services.merchants.createMerchant({ name, country: 'NG', supportEmail: `support${counter}@merchant.test`, feeBearer: 'merchant' });
  } finally {
    await runtime.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
