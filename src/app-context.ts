import type { MikroORM } from '@mikro-orm/postgresql';
import type { Config } from './config';
import type { Clock } from './shared/clock';
import { Pending } from './shared/pending';
import { SecretBox } from './crypto/secret-box';
import { PayloadService } from './merchants/payload.service';
import { DecryptPool } from './crypto/decrypt-pool';
import { AuthService } from './merchants/auth.service';
import { MerchantService } from './merchants/merchant.service';
import { MemberService } from './merchants/member.service';
import { PasswordResetService } from './merchants/password-reset';
import { TeamMail } from './merchants/team-mail';
import type { Mailer } from './mail/mailer';
import { createSmtpMailer } from './mail/smtp-mailer';
import { MemberTotpService } from './merchants/member-totp.service';
import { WebhookSecretService } from './merchants/webhook-secret.service';
import { BankService } from './banks/bank.service';
import { PaymentLinkService } from './links/payment-link.service';
import { FeeService } from './fees/fee.service';
import { OrderService } from './orders/order.service';
import { TimelineService } from './timeline/timeline.service';
import { fingerprintKey, IdempotencyService } from './idempotency/idempotency.service';
import { PaymentService } from './payments/payment.service';
import { LinkCheckoutService } from './payments/link-checkout.service';
import { MerchantReturnService } from './payments/merchant-return.service';
import { RecurringBillingService } from './payments/recurring-billing.service';
import { RefundService } from './payments/refund.service';
import { DisputeService } from './payments/dispute.service';
import { DisputeJobs } from './payments/dispute-jobs';
import { DisputeSteps } from './payments/dispute-steps';
import { SandboxProcessor } from './payments/sandbox/sandbox.processor';
import { withTimeLimit } from './payments/processor-time-limit';
import type { PaymentProcessors } from './payments/processor';
import { OutboxService } from './events/outbox.service';
import { OrderStatusBus } from './events/order-status-bus';
import { EVENTS_CHANNEL, InProcessFanout, PostgresFanout, RedisFanout, type ChangesSince, type EventFanout } from './events/event-fanout';
import { WebhookDispatcher } from './events/webhook-dispatcher';
import { WebhookEndpointService } from './merchants/webhook-endpoint.service';
import { DashboardSessionService } from './merchants/dashboard-session.service';
import { AuditService } from './merchants/audit/audit.service';
import type { DatabaseMode } from './database';
import { TenantCaches, type TenantScope } from './merchants/tenant-cache';
import { ReadRouting } from './db/read-routing';

/** The domain services, wired once; adapters receive this and nothing else. */
export interface AppServices {
  auth: AuthService;
  merchants: MerchantService;
  /** A merchant's team: members, roles and invitations. */
  members: MemberService;
  /** Members' password resets: emailed links, links made by an owner or admin, setting the password. */
  passwordResets: PasswordResetService;
  /** The team's emails (invitations, password resets): queued with their link, sent by the email sender when SMTP_URL is set. */
  teamMail: TeamMail;
  /** A member's own second factor (TOTP and recovery codes), also checked at sign-in. */
  memberTotp: MemberTotpService;
  payloads: PayloadService;
  banks: BankService;
  links: PaymentLinkService;
  fees: FeeService;
  orders: OrderService;
  timeline: TimelineService;
  idempotency: IdempotencyService;
  payments: PaymentService;
  linkCheckout: LinkCheckoutService;
  /** The one return of a finished authentication page to the merchant's RedirectUrl. */
  merchantReturns: MerchantReturnService;
  recurring: RecurringBillingService;
  /** Refunds of paid orders (rules, processor calls, reconciliation). */
  refunds: RefundService;
  /** Disputes of paid orders: reading and answering them. */
  disputes: DisputeService;
  /** The dispute job: the processor's dispute notices, deadlines, answers to send again. */
  disputeJobs: DisputeJobs;
  orderStatusBus: OrderStatusBus;
  /** Committed order changes to this instance's bus and dispatcher (on a PostgreSQL server: LISTEN/NOTIFY, or Redis pub/sub with REDIS_URL). */
  eventFanout: EventFanout;
  /** The announcements of replaced keys and ended sessions still on their way (Runtime.close() waits for them). */
  keyAnnouncements: Pending;
  /** Webhook delivery: redeliver, test ping, delivery log; the background dispatcher. */
  webhooks: WebhookDispatcher;
  /** The merchant's webhook URL per environment. */
  webhookEndpoints: WebhookEndpointService;
  /** The webhook signing secret of each environment: read to sign, rotated by the merchant. */
  signingSecrets: WebhookSecretService;
  /** Dashboard sign-in sessions (a private key exchanged for a cookie). */
  dashboardSessions: DashboardSessionService;
  /** The merchants' audit logs: every change and sign-in, append-only. */
  audit: AuditService;
  /** Per-instance caches of api-keys and tenant settings (invalidated through the database). */
  tenantCaches: TenantCaches;
  /** Where list reads go (the read replica of DATABASE_READ_URL, or the primary); adapters report callers' writes to it. */
  reads: ReadRouting;
}

export interface AppContext {
  config: Config;
  orm: MikroORM;
  clock: Clock;
  services: AppServices;
}

export function createServices(
  config: Config,
  orm: MikroORM,
  masterKey: Buffer,
  clock: Clock,
  mode: DatabaseMode = config.databaseUrl ? 'postgres' : 'embedded',
  reads: ReadRouting = new ReadRouting(orm, null),
): AppServices {
  const secrets = new SecretBox(masterKey);
  const audit = new AuditService(clock, reads);
  // Per-instance caches of api-keys and tenant settings; `hearing` is set once the fan-out exists (below).
  let hearing = () => true;
  const tenantCaches = new TenantCaches({ ttlMs: config.tenantCacheTtlMs, hearing: () => hearing() });
  const fees = new FeeService(orm, tenantCaches);
  const timeline = new TimelineService(orm, reads);
  const orders = new OrderService(orm, fees, reads, tenantCaches);
  const orderStatusBus = new OrderStatusBus();
  // One address rule for setting URLs and for delivering, in both environments.
  const webhookUrlPolicy = { allowedNetworks: config.webhookAllowedNetworks, allowPrivate: config.allowPrivateWebhookUrls };
  // Email goes out only with SMTP_URL; the domain sees the Mailer, never the transport.
  const mailer: Mailer | null = config.smtpUrl ? createSmtpMailer(config.smtpUrl, config.smtpFrom) : null;
  const teamMail = new TeamMail(orm, audit, mailer, secrets, {
    retryDelaysMs: config.emailRetryDelaysMs,
    pollIntervalMs: config.emailPollIntervalMs,
    retentionDays: config.emailOutboxRetentionDays,
  });
  const members = new MemberService(orm, clock, config.publicUrl, audit, teamMail);
  const memberTotp = new MemberTotpService(orm, secrets, clock, audit);
  const merchants = new MerchantService(orm, secrets, clock, audit, config.encryptionKeyBits, webhookUrlPolicy, members);
  // With REDIS_URL the instances hear each other through Redis: no NOTIFY at commit (the fan-out publishes after it).
  const events: 'in-process' | 'postgres' | 'redis' = mode !== 'postgres' || !config.databaseUrl ? 'in-process' : config.redisUrl ? 'redis' : 'postgres';
  const outbox = new OutboxService(config.publicUrl, clock, events === 'postgres' ? EVENTS_CHANNEL : null, tenantCaches);
  const signingSecrets = new WebhookSecretService(orm, secrets, clock, audit);
  const webhooks = new WebhookDispatcher(
    orm,
    outbox,
    signingSecrets,
    clock,
    {
      retryDelaysMs: config.webhookRetryDelaysMs,
      timeoutMs: config.webhookTimeoutMs,
      concurrency: config.webhookConcurrency,
      endpointConcurrency: config.webhookEndpointConcurrency,
      merchantConcurrency: config.webhookMerchantConcurrency,
      testPingsPerMinute: config.webhookTestPingsPerMinute,
      pollIntervalMs: config.webhookPollIntervalMs,
      urlPolicy: webhookUrlPolicy,
    },
    reads,
  );
  const wake = () => webhooks.wake();
  const changesSince: ChangesSince = (since, after) => outbox.changesSince(orm.em.fork(), since, after);
  const eventFanout: EventFanout =
    events === 'redis'
      ? new RedisFanout(orderStatusBus, wake, { url: config.redisUrl!, changesSince })
      : events === 'postgres'
        ? new PostgresFanout(orderStatusBus, wake, { connectionString: config.databaseUrl!, changesSince })
        : new InProcessFanout(orderStatusBus, wake);
  // Changes made here drop this instance's entries at once, and every instance's through the
  // fan-out: the database's triggers NOTIFY them (LISTEN), or the fan-out publishes them (Redis).
  hearing = () => eventFanout.hearing;
  eventFanout.onTenantChanged((scope) => tenantCaches.invalidate(scope));
  const tenantChanged = (scope: TenantScope) => {
    tenantCaches.invalidate(scope);
    eventFanout.announceTenantChanged(scope);
  };
  merchants.onSettingsChanged(tenantChanged);
  // Replaced api-keys and ended member sessions are announced by whichever process made the change
  // (a command line's too), so that every instance closes the sockets opened with them.
  const keyAnnouncements = new Pending();
  merchants.onApiKeysReplaced((notice) => keyAnnouncements.add(eventFanout.announceKeysExpiry(notice)));
  members.onMemberSessionsEnded((notice) => {
    for (const environmentId of notice.environmentIds) keyAnnouncements.add(eventFanout.announceKeysExpiry({ environmentId, expiresAt: clock.now() }));
  });
  const links = new PaymentLinkService(orm, config.publicUrl, audit, reads);
  // Worker threads for RSA decryption start here; Runtime.close() stops them (payloads.close()).
  const payloads = new PayloadService(orm, secrets, clock, new DecryptPool({ threads: config.decryptThreads }), tenantCaches);
  // Live keys have no processor until one is configured: live payments (and renewals) are refused, never simulated.
  // Every processor call is bounded by PROCESSOR_TIMEOUT_MS: no request waits on an acquirer longer.
  const processors: PaymentProcessors = { test: withTimeLimit(new SandboxProcessor(orm), config.processorTimeoutMs), live: null };
  // Renewals are charged through the processor of the subscription's environment, as payments are.
  const recurring = new RecurringBillingService(orm, processors, timeline, clock, audit);
  const payments = new PaymentService(
    orm,
    processors,
    orders,
    timeline,
    outbox,
    eventFanout,
    clock,
    fees,
    links,
    {
      publicUrl: config.publicUrl,
      authenticationTimeoutMs: config.authenticationTimeoutMs,
      authorizationTtlMs: config.authorizationTtlHours * 3_600_000,
    },
    recurring,
    audit,
  );
  const refunds = new RefundService(orm, processors, outbox, audit, wake);
  const disputeSteps = new DisputeSteps(timeline, outbox);
  return {
    auth: new AuthService(orm, clock, tenantCaches),
    tenantCaches,
    merchants,
    members,
    passwordResets: new PasswordResetService(orm, clock, config.publicUrl, audit, teamMail),
    teamMail,
    memberTotp,
    signingSecrets,
    payloads,
    banks: new BankService(orm, config.publicUrl),
    links,
    fees,
    timeline,
    orders,
    idempotency: new IdempotencyService(orm, clock, fingerprintKey(masterKey)),
    payments,
    recurring,
    refunds,
    disputes: new DisputeService(orm, processors, disputeSteps, audit, clock, wake),
    disputeJobs: new DisputeJobs(orm, processors, disputeSteps, clock, wake),
    linkCheckout: new LinkCheckoutService(links, orders, payments, payloads, fees, config.publicUrl, clock, config.authenticationTimeoutMs),
    merchantReturns: new MerchantReturnService(orm, clock),
    orderStatusBus,
    eventFanout,
    keyAnnouncements,
    webhooks,
    webhookEndpoints: new WebhookEndpointService(orm, webhookUrlPolicy, audit, { invalidate: tenantChanged }),
    dashboardSessions: new DashboardSessionService(orm, clock, config.dashboardSessionTtlSeconds, audit, memberTotp),
    audit,
    reads,
  };
}
