import type { CreatedMerchant } from '../../src/merchants/merchant.service';
import type { TestService } from './service';

let counter = 0;

/** A fresh merchant through the domain service, as the CLI or the admin mutation make them. */
export function createTestMerchant(t: TestService, overrides: Partial<{ name: string; webhookUrl: string; keyBits: number }> = {}): Promise<CreatedMerchant> {
  counter += 1;
  return t.service.runtime.ctx.services.merchants.createMerchant({
    name: overrides.name ?? `Test Merchant ${process.pid}-${counter}`,
    country: 'NG',
    supportEmail: `support${counter}@merchant.test`,
    webhookUrl: overrides.webhookUrl,
    keyBits: overrides.keyBits,
  });
}
