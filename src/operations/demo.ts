import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../config';
import type { Runtime } from '../bootstrap';
import type { CreatedMerchant } from '../merchants/merchant.service';
import { SYSTEM_ACTOR } from '../merchants/audit/audit.service';
import { DEMO_FILE, type DemoRecord } from './demo-record';

export interface DemoSeed {
  merchant: CreatedMerchant;
  link: DemoRecord;
  /** The demo merchant's owner, who signs in to the dashboard: the password is shown once, stored only as a hash. */
  owner: { email: string; password: string };
}

/** The demo merchant's owner. */
const DEMO_OWNER_EMAIL = 'owner@demo.example';

/** Seeding is on for the embedded database unless DEMO_MERCHANT=false; on a PostgreSQL server only with DEMO_MERCHANT=true. */
export function demoWanted(config: Config): boolean {
  return config.demoMerchant ?? !config.databaseUrl;
}

/**
 * First run: on an empty database, creates a demo merchant, its owner (a member with a random
 * password) and one payment link through the same domain services as the CLI and GraphQL, so
 * `npm start` on a bare machine leads to a payable checkout page and a dashboard to sign in to. Returns undefined when the database already has a merchant (every
 * later start): private keys are never shown twice.
 */
export async function seedDemoIfEmpty(runtime: Runtime): Promise<DemoSeed | undefined> {
  const { config, services, orm } = runtime.ctx;
  if (!demoWanted(config)) return undefined;
  const [row] = await orm.em.getConnection().execute('select exists (select 1 from subsidiary) as present');
  if (row?.present) return undefined;
  // The service seeds it by itself: the demo merchant's log names the system as its maker.
  const merchant = await services.merchants.createMerchant({ name: 'Demo Store', country: 'NG', supportEmail: 'demo@example.test' }, { actor: SYSTEM_ACTOR });
  // The owner joins as an invited person does (invitation, then their password), with no email sent.
  const invitation = await orm.em.fork().transactional((em) => services.members.inviteFirstOwner(em, merchant.subsidiary.id, DEMO_OWNER_EMAIL));
  const owner = { email: DEMO_OWNER_EMAIL, password: randomBytes(15).toString('base64url') };
  await services.members.acceptInvitation(new URL(invitation.invitationUrl).pathname.split('/').pop(), owner.password);
  const tenant = await services.auth.authenticate(merchant.keys.test.privateKey);
  const { link } = await services.links.create(tenant, {
    name: 'Demo T-shirt',
    description: 'A demo payment link: pay it with a sandbox card (4111 1111 1111 1111, OTP 123456).',
    paymentType: 'SC',
    currency: 'NGN',
    authOption: 'AUTH',
    amount: '5000',
  });
  const record: DemoRecord = { merchantId: merchant.subsidiary.id, paymentLinkUrl: services.links.paymentLinkUrl(link), paymentLinkReference: link.reference };
  fs.mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  fs.writeFileSync(path.join(config.dataDir, DEMO_FILE), `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  return { merchant, link: record, owner };
}

/** The text printed once, on the start that created the demo merchant and/or the admin token. */
export function welcomeText(options: { publicUrl: string; demo?: DemoSeed; adminToken?: { token: string; file: string } }): string {
  const { publicUrl, demo, adminToken } = options;
  const lines = ['', '================ first run ================'];
  if (adminToken) {
    lines.push(`Admin token (x-admin-token): ${adminToken.token}`, `  stored in ${adminToken.file} (mode 0600); ADMIN_TOKEN overrides it.`);
  }
  if (demo) {
    const keys = demo.merchant.keys.test;
    lines.push(
      `Demo merchant ${demo.merchant.subsidiary.id} (${demo.merchant.subsidiary.name}), test environment:`,
      `  public key:     ${keys.publicKey}`,
      `  private key:    ${keys.privateKey}`,
      `  webhook secret: ${demo.merchant.webhookSecret}`,
      `  encryption key: ${keys.encryptionKey}`,
      `Demo owner, to sign in to the dashboard at ${publicUrl}/dashboard:`,
      `  email:    ${demo.owner.email}`,
      `  password: ${demo.owner.password}`,
      `Demo payment link: ${demo.link.paymentLinkUrl}`,
      '  pay it with card 4111 1111 1111 1111, any future expiry, any CVV, OTP 123456.',
      'The private key, webhook secret and owner password are shown once: store them now. Live keys were created too',
      '(never shown); create merchants of your own with `npm run --silent cli -- merchant:create`.',
    );
  }
  lines.push(`Start here: ${publicUrl}/`, '===========================================', '');
  return lines.join('\n');
}
