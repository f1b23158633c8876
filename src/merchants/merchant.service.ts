import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { DEFAULT_ENCRYPTION_KEY_BITS, ENCRYPTION_KEY_SIZES, generateRsaKeyMaterial, isEncryptionKeyBits } from '../crypto/encryption-key';
import type { SecretBox } from '../crypto/secret-box';
import type { Clock } from '../shared/clock';
import { notFound, validationError, requiredField, unsupported } from '../shared/errors';
import { isCountryCode, isEmail } from '../shared/validation';
import { ApiKey, type ApiKeyKind } from './api-key.entity';
import { AppEnvironment, DEFAULT_FEE_BEARER, type EnvironmentMode, type FeeBearer } from './app-environment.entity';
import { EncryptionKey } from './encryption-key.entity';
import { Subsidiary } from './subsidiary.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import { validateWebhookUrl, type WebhookUrlPolicy } from './webhook-url';
import { apiKeyHint, generateApiKey, hashApiKey } from './key-format';
import type { Tenant } from './tenant';
import { authorize, lockAuthorized } from './authorization';
import type { ActionClass } from './action-class';
import { newWebhookSecret, SIGNING_SECRET_STORE } from './webhook-secret.service';
import type { TenantScope } from './tenant-cache';
import { ADMIN_ACTOR, AuditActions, auditOriginOf, type AuditOrigin, type AuditService } from './audit/audit.service';
import type { MemberService } from './member.service';
import { normalizeEmail, type InvitationView } from './member-invitation';
import { Listeners } from '../shared/listeners';

export interface CreateMerchantInput {
  name: string;
  country: string;
  supportEmail: string;
  webhookUrl?: string | null;
  liveWebhookUrl?: string | null;
  /** Who bears the processing fee in both environments (default `customer`: DEFAULT_FEE_BEARER). */
  feeBearer?: string | null;
  /** RSA size of both environments' encryption keys; the configured size when omitted. */
  keyBits?: number | null;
  /** When given, this email is invited as the merchant's first member, an OWNER. */
  ownerEmail?: string | null;
}

/** Settings of one environment that the merchant (private key) or an operator (CLI) may change. */
export interface EnvironmentSettings {
  feeBearer: FeeBearer;
}

/** A merchant's settings per environment, as an operator sees them. */
export interface MerchantSettings {
  subsidiaryId: number;
  test: EnvironmentSettings;
  live: EnvironmentSettings;
}

const FEE_BEARERS: readonly FeeBearer[] = ['merchant', 'customer'];

/** Reads a fee bearer case-insensitively (`MERCHANT`, `customer`, …); unknown values are refused. */
export function parseFeeBearer(value: unknown): FeeBearer {
  const bearer = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (!bearer) throw requiredField('FeeBearer');
  if (!(FEE_BEARERS as readonly string[]).includes(bearer)) throw unsupported('FeeBearer');
  return bearer as FeeBearer;
}

export interface EnvironmentKeys {
  publicKey: string;
  privateKey: string;
  encryptionKey: string;
}

/** Exactly the documented JSON of `merchant:create --json`; private keys appear here once and never again. */
export interface CreatedMerchant {
  subsidiary: { id: number; name: string; country: string; supportEmail: string };
  /** Signs the test environment's webhooks. */
  webhookSecret: string;
  /** Signs the live environment's webhooks. */
  liveWebhookSecret: string;
  keys: { test: EnvironmentKeys; live: EnvironmentKeys };
  /** The first owner's invitation, when an owner email was given. */
  owner?: { email: string; invitationUrl: string };
}

export type RotatableKey = 'public' | 'private' | 'encryption';

export interface RotatedKeys {
  publicKey?: string;
  privateKey?: string;
  encryptionKey?: string;
  /** When the replaced keys stop working. */
  previousKeysExpireAt: Date;
}

/** After a rotation commits: the environment whose api-keys were replaced, and when the replaced ones stop working. */
export interface ApiKeysReplaced {
  environmentId: number;
  expiresAt: Date;
}

/** After a rotation or an operator's reset commits: which keys of which merchant environment were replaced. */
export interface KeysRotated extends ApiKeysReplaced {
  subsidiaryId: number;
  mode: EnvironmentMode;
  kinds: RotatableKey[];
}

/** A merchant as an operator lists it. */
export interface MerchantSummary {
  id: number;
  name: string;
  country: string;
  supportEmail: string;
  createdAt: Date;
}

/** Longest grace period a rotated key may keep working (Stripe allows up to 7 days too). */
export const MAX_ROTATION_GRACE_SECONDS = 7 * 24 * 3600;

export class MerchantService {
  private readonly settingsChangedListeners = new Listeners<TenantScope>();
  private readonly keysRotatedListeners = new Listeners<KeysRotated>();

  constructor(
    private readonly orm: MikroORM,
    private readonly secrets: SecretBox,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly rsaBits: number = DEFAULT_ENCRYPTION_KEY_BITS,
    private readonly webhookUrlPolicy: WebhookUrlPolicy = { allowPrivate: false },
    /** Invites the first owner of a new merchant (createMerchant with an owner email). */
    private readonly team?: Pick<MemberService, 'inviteFirstOwner' | 'queueInvitationEmail' | 'announceInvitations'>,
  ) {}

  /**
   * Makes a merchant with both environments and their keys. An operator's act (the admin
   * mutation, the command line): `origin` names who, for the new merchant's audit log.
   */
  async createMerchant(input: CreateMerchantInput, origin: AuditOrigin = { actor: ADMIN_ACTOR }): Promise<CreatedMerchant> {
    const name = (input.name ?? '').trim();
    const country = (input.country ?? '').trim().toUpperCase();
    const supportEmail = (input.supportEmail ?? '').trim();
    if (!name) throw requiredField('Name');
    if (name.length > 200) throw validationError('The Name field must be at most 200 characters.');
    if (!country) throw requiredField('Country');
    if (!isCountryCode(country)) throw validationError('The Country field must be an ISO 3166-1 alpha-2 code.');
    if (!supportEmail) throw requiredField('Email');
    if (!isEmail(supportEmail)) throw validationError('The Email field is not a valid e-mail address.');
    const webhookUrls = { test: null as string | null, live: null as string | null };
    for (const [mode, field, url] of [
      ['test', 'WebhookUrl', input.webhookUrl],
      ['live', 'LiveWebhookUrl', input.liveWebhookUrl],
    ] as const) {
      if (url && url.trim()) webhookUrls[mode] = await validateWebhookUrl(url, this.webhookUrlPolicy, field);
    }
    const feeBearer = input.feeBearer === undefined || input.feeBearer === null ? DEFAULT_FEE_BEARER : parseFeeBearer(input.feeBearer);

    const ownerEmail = input.ownerEmail === undefined || input.ownerEmail === null ? null : normalizeEmail(input.ownerEmail);
    if (ownerEmail !== null && !this.team) throw validationError('Members cannot be invited here.');
    const keyBits = input.keyBits ?? this.rsaBits;
    if (!isEncryptionKeyBits(keyBits)) throw validationError(`The KeyBits field must be one of ${ENCRYPTION_KEY_SIZES.join(', ')}.`);

    // RSA generation runs on libuv's thread pool, off the event loop; both at once.
    const [testRsa, liveRsa] = await Promise.all([generateRsaKeyMaterial(keyBits), generateRsaKeyMaterial(keyBits)]);
    // Each environment signs its webhooks with its own secret.
    const webhookSecrets = { test: newWebhookSecret(), live: newWebhookSecret() };

    let invitation: InvitationView | null = null;
    const created = await this.orm.em.fork().transactional(async (em) => {
      const subsidiary = em.create(Subsidiary, {
        name,
        country,
        supportEmail,
        webhookSecretSealed: 'pending',
      });
      await em.flush();
      subsidiary.webhookSecretSealed = this.secrets.seal(webhookSecrets.live, SIGNING_SECRET_STORE.live.context(subsidiary.id));
      subsidiary.testWebhookSecretSealed = this.secrets.seal(webhookSecrets.test, SIGNING_SECRET_STORE.test.context(subsidiary.id));

      const keys = {} as CreatedMerchant['keys'];
      for (const [mode, rsa, url] of [
        ['test', testRsa, webhookUrls.test],
        ['live', liveRsa, webhookUrls.live],
      ] as const) {
        const environment = em.create(AppEnvironment, { subsidiary, mode, feeBearer });
        const publicKey = this.addApiKey(em, environment, 'public');
        const privateKey = this.addApiKey(em, environment, 'private');
        await this.addEncryptionKey(em, environment, rsa);
        if (url) em.create(WebhookEndpoint, { environment, url });
        keys[mode] = { publicKey, privateKey, encryptionKey: rsa.encryptionKey };
      }
      await em.flush();
      await this.audit.record(em, {
        ...origin,
        action: AuditActions.merchantCreated,
        subsidiaryId: subsidiary.id,
        target: `merchant ${subsidiary.id} ${name}`,
      });
      invitation = ownerEmail === null ? null : await this.team!.inviteFirstOwner(em, subsidiary.id, ownerEmail);
      // The first owner's invitation email is queued with the merchant (with SMTP_URL).
      if (invitation) await this.team!.queueInvitationEmail(em, subsidiary.id, name, invitation);
      return {
        subsidiary: { id: subsidiary.id, name, country, supportEmail },
        webhookSecret: webhookSecrets.test,
        liveWebhookSecret: webhookSecrets.live,
        keys,
        ...(invitation ? { owner: { email: invitation.email, invitationUrl: invitation.invitationUrl } } : {}),
      };
    });
    // Committed: the first owner's invitation email goes out now, never failing the creation.
    if (invitation) this.team!.announceInvitations();
    return created;
  }

  /**
   * Replaces the tenant's keys of the given kinds. The replaced keys keep working for
   * `graceSeconds` (0: they stop at once), so a merchant can roll them out without downtime.
   * Only a private key without an expiry (or a member allowed to) may rotate keys.
   */
  async rotateKeys(tenant: Tenant, kinds: RotatableKey[], graceSeconds = 0): Promise<RotatedKeys> {
    // The private key is a secret of the merchant; the public and encryption keys are developers' tools.
    const action: ActionClass = kinds.includes('private') ? 'secrets' : 'developers';
    authorize(tenant, action, { manages: true });
    // Serialises concurrent rotations of one environment; the calling key may still manage.
    return this.replaceKeys(tenant.environmentId, kinds, graceSeconds, auditOriginOf(tenant), (em) => lockAuthorized(em, tenant, action, { manages: true }));
  }

  /**
   * The operator's reset of a merchant environment's keys (command line), for keys that are
   * lost or leaked: the same rotation with no grace, so the old keys stop at once. Private and
   * public keys by default; the new ones are in the answer only.
   */
  async resetKeys(subsidiaryId: number, mode: EnvironmentMode, kinds: RotatableKey[] = ['public', 'private']): Promise<RotatedKeys> {
    const environment = await this.orm.em.fork().findOne(AppEnvironment, { subsidiary: subsidiaryId, mode });
    if (!environment) throw notFound('merchant not found', '13');
    return this.replaceKeys(environment.id, kinds, 0, { actor: ADMIN_ACTOR }, async () => {});
  }

  private async replaceKeys(
    environmentId: number,
    kinds: RotatableKey[],
    graceSeconds: number,
    origin: AuditOrigin,
    authorise: (em: EntityManager) => Promise<void>,
  ): Promise<RotatedKeys> {
    if (kinds.length === 0) throw validationError('Choose at least one key to rotate.');
    if (!Number.isInteger(graceSeconds) || graceSeconds < 0 || graceSeconds > MAX_ROTATION_GRACE_SECONDS) {
      throw validationError(`The grace period must be a whole number of seconds from 0 to ${MAX_ROTATION_GRACE_SECONDS}.`);
    }
    const rsa = kinds.includes('encryption') ? await generateRsaKeyMaterial(this.rsaBits) : undefined;
    const expireAt = new Date(this.clock.now().getTime() + graceSeconds * 1000);

    const rotated = await this.orm.em.fork().transactional(async (em) => {
      await authorise(em);
      const environment = await em.findOneOrFail(AppEnvironment, { id: environmentId }, { lockMode: 4 /* PESSIMISTIC_WRITE */ });
      const result: RotatedKeys = { previousKeysExpireAt: expireAt };
      for (const kind of ['public', 'private'] as const) {
        if (!kinds.includes(kind)) continue;
        await em.nativeUpdate(ApiKey, { environment, kind, $or: [{ expiresAt: null }, { expiresAt: { $gt: expireAt } }] }, { expiresAt: expireAt });
        const key = this.addApiKey(em, environment, kind);
        if (kind === 'public') result.publicKey = key;
        else result.privateKey = key;
      }
      if (rsa) {
        await em.nativeUpdate(EncryptionKey, { environment, $or: [{ expiresAt: null }, { expiresAt: { $gt: expireAt } }] }, { expiresAt: expireAt });
        await this.addEncryptionKey(em, environment, rsa);
        result.encryptionKey = rsa.encryptionKey;
      }
      await em.flush();
      await this.audit.record(em, {
        ...origin,
        action: AuditActions.keysRotated,
        subsidiaryId: environment.subsidiary.id,
        environment: environment.mode as EnvironmentMode,
        target: `${kinds.join(', ')} key (grace ${graceSeconds} s)`,
      });
      return { rotated: result, subsidiaryId: environment.subsidiary.id, mode: environment.mode as EnvironmentMode };
    });
    this.settingsChanged({ environmentId });
    const notice: KeysRotated = {
      environmentId,
      subsidiaryId: rotated.subsidiaryId,
      mode: rotated.mode,
      kinds: (['public', 'private', 'encryption'] as const).filter((k) => kinds.includes(k)),
      expiresAt: expireAt,
    };
    this.keysRotatedListeners.emit(notice);
    return rotated.rotated;
  }

  /** Calls `listener` after each committed key rotation or reset (the business event log records it). */
  onKeysRotated(listener: (notice: KeysRotated) => void): () => void {
    return this.keysRotatedListeners.add(listener);
  }

  /** Every merchant, oldest first, as an operator lists them: no secrets, no keys. */
  async listMerchants(): Promise<MerchantSummary[]> {
    const rows = await this.orm.em.fork().find(Subsidiary, {}, { orderBy: { id: 'asc' } });
    return rows.map((s) => ({ id: s.id, name: s.name, country: s.country, supportEmail: s.supportEmail, createdAt: s.createdAt }));
  }

  /**
   * Calls `listener` after each committed change of tenant settings made here (keys, fee
   * bearer), at once and in-process: this instance's caches must not wait for the database's
   * notification, which every instance (this one too) receives a moment later; when Redis
   * carries the events, the caller publishes the change to the other instances from here.
   */
  onSettingsChanged(listener: (scope: TenantScope) => void): () => void {
    return this.settingsChangedListeners.add(listener);
  }

  private settingsChanged(scope: TenantScope): void {
    this.settingsChangedListeners.emit(scope);
  }

  /** Calls `listener` after each committed rotation of api-keys (e.g. to close connections opened with them); returns the unsubscribe. */
  onApiKeysReplaced(listener: (notice: ApiKeysReplaced) => void): () => void {
    return this.onKeysRotated((notice) => {
      if (notice.kinds.includes('public') || notice.kinds.includes('private')) listener({ environmentId: notice.environmentId, expiresAt: notice.expiresAt });
    });
  }

  /** Who bears the processing fee in the tenant's environment (private key only). */
  async setFeeBearer(tenant: Tenant, bearer: FeeBearer): Promise<FeeBearer> {
    authorize(tenant, 'secrets');
    const parsed = parseFeeBearer(bearer);
    await this.orm.em.fork().transactional(async (em) => {
      await lockAuthorized(em, tenant, 'secrets');
      const environment = await em.findOneOrFail(AppEnvironment, { id: tenant.environmentId });
      environment.feeBearer = parsed;
      await em.flush();
      await this.audit.recordFor(em, tenant, AuditActions.settingsUpdated, `feeBearer ${parsed}`);
    });
    this.settingsChanged({ environmentId: tenant.environmentId });
    return parsed;
  }

  async feeBearer(tenant: Tenant): Promise<FeeBearer> {
    return (await this.orm.em.fork().findOneOrFail(AppEnvironment, { id: tenant.environmentId })).feeBearer;
  }

  /**
   * The operator's view (command line): changes the settings of one or both environments of a
   * merchant chosen by id, and answers the settings of both. Orders keep the fee split they
   * were created with; only orders created afterwards follow a new setting.
   */
  async updateSettings(
    subsidiaryId: number,
    changes: { feeBearer?: string | null },
    modes: readonly EnvironmentMode[] = ['test', 'live'],
    origin: AuditOrigin = { actor: ADMIN_ACTOR },
  ): Promise<MerchantSettings> {
    const feeBearer = changes.feeBearer === undefined || changes.feeBearer === null ? undefined : parseFeeBearer(changes.feeBearer);
    const settings = await this.orm.em.fork().transactional(async (em) => {
      const environments = await em.find(AppEnvironment, { subsidiary: subsidiaryId });
      if (environments.length === 0) throw notFound('merchant not found', '13');
      const changed = environments.filter((environment) => feeBearer && modes.includes(environment.mode));
      for (const environment of changed) environment.feeBearer = feeBearer!;
      await em.flush();
      for (const environment of changed) {
        await this.audit.record(em, {
          ...origin,
          action: AuditActions.settingsUpdated,
          subsidiaryId,
          environment: environment.mode,
          target: `feeBearer ${feeBearer}`,
        });
      }
      const of = (mode: EnvironmentMode): EnvironmentSettings => ({
        feeBearer: environments.find((e) => e.mode === mode)?.feeBearer ?? 'merchant',
      });
      return { subsidiaryId, test: of('test'), live: of('live') };
    });
    this.settingsChanged({ subsidiaryId });
    return settings;
  }

  /** The tenant's own merchant record. */
  async getSubsidiary(tenant: Tenant): Promise<Subsidiary> {
    const subsidiary = await this.orm.em.fork().findOne(Subsidiary, { id: tenant.subsidiaryId });
    if (!subsidiary) throw notFound('merchant not found', '13');
    return subsidiary;
  }

  /** The environment's api-keys that still work (or will, until their grace ends), newest first: hints only, never the keys. */
  async listApiKeys(tenant: Tenant): Promise<{ kind: ApiKeyKind; hint: string; createdAt: Date; expiresAt: Date | null }[]> {
    authorize(tenant, 'developers');
    const now = this.clock.now();
    const keys = await this.orm.em
      .fork()
      .find(ApiKey, { environment: tenant.environmentId, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] }, { orderBy: { id: 'desc' } });
    return keys.map((k) => ({ kind: k.kind, hint: k.hint, createdAt: k.createdAt, expiresAt: k.expiresAt }));
  }

  /** The encryption key merchants should use now (the newest unexpired one). */
  async currentEncryptionKey(tenant: Tenant): Promise<string> {
    const now = this.clock.now();
    const key = await this.orm.em
      .fork()
      .findOne(EncryptionKey, { environment: tenant.environmentId, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] }, { orderBy: { id: 'desc' } });
    if (!key) throw notFound('encryption key not found', '13');
    return key.encryptionKey;
  }

  private addApiKey(em: EntityManager, environment: AppEnvironment, kind: ApiKeyKind): string {
    const key = generateApiKey(kind, environment.mode as EnvironmentMode);
    em.create(ApiKey, { environment, kind, keyHash: hashApiKey(key), hint: apiKeyHint(key) });
    return key;
  }

  private async addEncryptionKey(
    em: EntityManager,
    environment: AppEnvironment,
    rsa: { bits: number; encryptionKey: string; privateKeyPem: string },
  ): Promise<void> {
    const row = em.create(EncryptionKey, {
      environment,
      bits: rsa.bits,
      encryptionKey: rsa.encryptionKey,
      privateKeySealed: 'pending',
    });
    await em.flush();
    // The row id is part of the seal's context, so a sealed key cannot be moved to another row.
    row.privateKeySealed = this.secrets.seal(rsa.privateKeyPem, `encryption-key:${row.id}`);
  }
}
