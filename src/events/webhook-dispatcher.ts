import type { MikroORM } from '@mikro-orm/postgresql';
import type { Clock } from '../shared/clock';
import { PollLoop } from '../shared/poll-loop';
import { DomainError, notFound, validationError } from '../shared/errors';
import type { Tenant } from '../merchants/tenant';
import { authorize } from '../merchants/authorization';
import type { EnvironmentMode } from '../merchants/app-environment.entity';
import { TimelineEvents } from '../timeline/timeline.service';
import type { Execute, OutboxService } from './outbox.service';
import type { DeliveryState } from './webhook-delivery.entity';
import { signWebhook, webhookSignatureHeaders } from './webhook-signature';
import { WebhookHttpClient, type WebhookHttpResult } from './webhook-http';
import { webhookDestination, type WebhookResolver, type WebhookUrlPolicy } from '../merchants/webhook-url';
import type { WebhookDnsOptions } from '../merchants/webhook-dns';
import { silentLog, type EventLog } from './event-transport';
import { claimDueDeliveries, type ClaimConnection, type ClaimedDelivery } from './webhook-claim';
import type { ReadRouting } from '../db/read-routing';
import { WebhookDeliveryLog } from './webhook-delivery-log';
import { deliveryView, type WebhookDeliveryFilter, type WebhookDeliveryView } from './webhook-delivery.view';
import { Listeners } from '../shared/listeners';

export type { WebhookAttemptView, WebhookDeliveryFilter, WebhookDeliveryView } from './webhook-delivery.view';

export interface WebhookDispatcherOptions {
  /** WEBHOOK_RETRY_DELAYS_MS: the delay before attempt n+1 is `retryDelaysMs[n-1]`; after the last, dead. */
  retryDelaysMs: readonly number[];
  /** A receiver's deadline (10 s by default): a hard bound on each attempt. */
  timeoutMs: number;
  /** Requests in flight in this instance; 0: start() does nothing (runOnce() still works). */
  concurrency: number;
  /** Requests in flight per destination (scheme, host, port), across instances. */
  endpointConcurrency: number;
  /** Requests in flight per merchant (both environments), across instances: one merchant's share. */
  merchantConcurrency: number;
  /** Test pings one environment may request per minute. */
  testPingsPerMinute: number;
  /** How often an idle dispatcher looks for due deliveries. */
  pollIntervalMs: number;
  /** The networks webhooks may reach (WEBHOOK_ALLOWED_NETWORKS); the same rules in both environments. */
  urlPolicy: WebhookUrlPolicy;
  /** Host name resolution for deliveries (default: DNS queries with a deadline, see `WebhookDns`); tests inject their own. */
  resolve?: WebhookResolver;
  /** Settings of the default resolution (tests name nameservers of their own). */
  dns?: WebhookDnsOptions;
  /** Lease beyond the timeout before a claimed delivery may be claimed again (default: the timeout, at least 5 s). */
  leaseMarginMs?: number;
  /** Relative jitter of retry delays (default 0.1: ±10 %). */
  jitter?: number;
}

/** What became of one attempt, reported after it was recorded (for metrics). */
export interface WebhookAttemptOutcome {
  /** delivered (2xx), retry (scheduled again), dead (that was the last), stale (another worker owns the delivery now). */
  result: 'delivered' | 'retry' | 'dead' | 'stale';
  statusCode: number | null;
  latencyMs: number;
  /** How late the attempt started: from when it was due to when it was claimed. */
  lagMs: number;
  /** The delivery, its attempt number (1 for the first) and the order it is about (for the business event log). */
  deliveryId: string;
  attempt: number;
  orderReference: string | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const USER_AGENT = 'checkout-gateway-webhooks/1';
export const EVENT_NOT_FOUND = 'Event not found at the moment';
/** The `code` of a refused test ping (GraphQL `extensions.code`). */
export const RATE_LIMITED = 'RATE_LIMITED';
const TEST_PING_WINDOW_MS = 60_000;

/**
 * Delivers the outbox's webhooks at least once. Workers claim due deliveries with
 * FOR UPDATE SKIP LOCKED and take a lease (committed before any request goes out), POST the
 * stored body with Standard Webhooks signature headers, record every attempt, and either
 * finish the delivery (2xx), schedule the next attempt (backoff with jitter), or mark it
 * dead after the last. A worker that dies mid-way leaves a lease that runs out, and the
 * delivery is claimed again: a receiver may see an event twice, never zero times.
 */
export class WebhookDispatcher {
  private readonly loop: PollLoop;
  private readonly inflight = new Set<Promise<void>>();
  /** The delivery log merchants read (listDeliveries). */
  private readonly deliveryLog: WebhookDeliveryLog;
  private nextDueAt = Number.POSITIVE_INFINITY;
  private log: EventLog = silentLog;
  private readonly http: WebhookHttpClient;
  private readonly attemptListeners = new Listeners<WebhookAttemptOutcome>();

  constructor(
    private readonly orm: MikroORM,
    private readonly outbox: OutboxService,
    private readonly secrets: { signing(subsidiaryId: number, mode: EnvironmentMode): Promise<string[]> },
    private readonly clock: Clock,
    private readonly options: WebhookDispatcherOptions,
    reads: ReadRouting,
  ) {
    this.http = new WebhookHttpClient(options.urlPolicy, { resolve: options.resolve, dns: options.dns });
    this.deliveryLog = new WebhookDeliveryLog(orm, reads);
    this.loop = new PollLoop({
      round: () => this.round(),
      idleMs: () => Math.min(this.options.pollIntervalMs, this.nextDueAt - this.clock.now().getTime()),
      backoffBaseMs: options.pollIntervalMs,
      fault: (err) => this.log.error({ err }, 'claiming webhook deliveries failed'),
    });
  }

  /** Starts the background loop (no-op when concurrency is 0 or already started). */
  start(log?: EventLog): void {
    if (log) this.log = log;
    if (this.options.concurrency <= 0) return;
    this.loop.start();
  }

  /** Stops claiming and waits for the requests in flight (each bounded by the timeout). */
  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.allSettled([...this.inflight]);
    this.http.close();
  }

  /** Hears the outcome of each attempt once recorded; returns the unsubscribe. */
  onAttempt(listener: (outcome: WebhookAttemptOutcome) => void): () => void {
    return this.attemptListeners.add(listener);
  }

  /** Something may be due now (an event was committed, a slot freed up). */
  wake(): void {
    this.loop.wake();
  }

  /**
   * Delivers everything due now and waits for the outcomes; returns the number of attempts
   * made. For tests and tools; the background loop does the same continuously.
   */
  async runOnce(): Promise<number> {
    let attempts = 0;
    for (let round = 0; round < 1000; round += 1) {
      const jobs = await this.claim(Math.max(this.options.concurrency, 8));
      if (jobs.length === 0) break;
      await Promise.all(jobs.map((job) => this.deliver(job)));
      attempts += jobs.length;
    }
    return attempts;
  }

  /** A new pending delivery of a stored event of the tenant, to the environment's current URL. */
  async redeliver(tenant: Tenant, eventId: string): Promise<WebhookDeliveryView> {
    authorize(tenant, 'developers');
    if (typeof eventId !== 'string' || !UUID.test(eventId)) throw notFound(EVENT_NOT_FOUND, '13');
    const view = await this.inTransaction(async (execute) => {
      const events: Array<{ id: string; notify: string; notify_type: string; sequence: number; reference: string | null }> = await execute(
        `select e.id, e.notify, e.notify_type, e.sequence, o.reference
           from outbox_event e left join checkout_order o on o.id = e.order_id
          where e.id = ? and e.environment_id = ?`,
        [eventId.toLowerCase(), tenant.environmentId],
      );
      const found = events[0];
      if (!found) throw notFound(EVENT_NOT_FOUND, '13');
      if (found.notify === 'transaction' && found.notify_type === 'pending') {
        throw validationError('Only successful and failed order events are delivered as webhooks.');
      }
      const url = await this.activeEndpointUrl(execute, tenant);
      const event = {
        id: found.id,
        notify: found.notify,
        notifyType: found.notify_type,
        sequence: found.sequence,
        order: found.reference === null ? null : { reference: found.reference },
      };
      return deliveryView(await this.outbox.recordRedelivery(execute, event, url), []);
    });
    this.wake();
    return view;
  }

  /**
   * Sends `"notify": "test_assess"` to the environment's webhook URL (validation error when none
   * is set). At most `testPingsPerMinute` per environment in any minute, across instances;
   * beyond that a `RATE_LIMITED` error says when to try again.
   */
  async sendTestPing(tenant: Tenant): Promise<WebhookDeliveryView> {
    authorize(tenant, 'developers');
    const view = await this.inTransaction(async (execute) => {
      // Locked: concurrent pings of one environment are counted one after the other.
      const url = await this.activeEndpointUrl(execute, tenant, true);
      await this.checkTestPingRate(execute, tenant);
      return deliveryView(await this.outbox.recordTestPing(execute, tenant.environmentId, url), []);
    });
    this.wake();
    return view;
  }

  /** The tenant's deliveries, newest first, each with its attempts; optionally of one event or one order. */
  async listDeliveries(tenant: Tenant, filter: WebhookDeliveryFilter = {}): Promise<WebhookDeliveryView[]> {
    authorize(tenant, 'developers');
    return this.deliveryLog.list(tenant, filter);
  }

  private async activeEndpointUrl(execute: Execute, tenant: Tenant, lock = false): Promise<string> {
    const rows: Array<{ url: string }> = await execute(`select url from webhook_endpoint where environment_id = ? and is_active${lock ? ' for update' : ''}`, [
      tenant.environmentId,
    ]);
    if (!rows[0]) throw validationError('No webhook URL is set for this environment.');
    return rows[0].url;
  }

  private async checkTestPingRate(execute: Execute, tenant: Tenant): Promise<void> {
    const limit = this.options.testPingsPerMinute;
    const now = this.clock.now().getTime();
    const rows: Array<{ n: string | number; oldest: Date | string | null }> = await execute(
      `select count(*) as n, min(created_at) as oldest from outbox_event
        where environment_id = ? and notify = 'test_assess' and created_at > ?`,
      [tenant.environmentId, new Date(now - TEST_PING_WINDOW_MS)],
    );
    const sent = Number(rows[0]?.n ?? 0);
    if (sent < limit) return;
    const oldest = rows[0]?.oldest ? new Date(rows[0].oldest).getTime() : now;
    const seconds = Math.max(1, Math.ceil((oldest + TEST_PING_WINDOW_MS - now) / 1000));
    throw new DomainError('conflict', `Too many test webhooks: at most ${limit} a minute for this environment. Try again in ${seconds} seconds.`, RATE_LIMITED);
  }

  /**
   * One round of the loop: claims as many due deliveries as there are free slots and starts
   * them (a finished one wakes the loop). True when every free slot was filled: more may be due.
   */
  private async round(): Promise<boolean> {
    if (this.nextDueAt <= this.clock.now().getTime()) this.nextDueAt = Number.POSITIVE_INFINITY;
    const free = this.options.concurrency - this.inflight.size;
    if (free <= 0) return false;
    const jobs = await this.claim(free);
    for (const job of jobs) this.track(this.deliver(job));
    return jobs.length === free;
  }

  private track(work: Promise<void>): void {
    this.inflight.add(work);
    void work.finally(() => {
      this.inflight.delete(work);
      this.wake();
    });
  }

  /**
   * Claims up to `max` due deliveries and leases them in one round trip; committed before returning. Leases of
   * every instance count against two allowances, so that no receiver and no merchant can hold
   * the dispatcher: at most `endpointConcurrency` in flight per destination and at most
   * `merchantConcurrency` per merchant. Merchants sharing a destination take turns there
   * (round robin, counting what each has in flight there), and among what fits, merchants with
   * fewer requests in flight go first: each merchant's first before anyone's second.
   */
  private async claim(max: number): Promise<ClaimedDelivery[]> {
    const leaseMs = this.options.timeoutMs + (this.options.leaseMarginMs ?? Math.max(5_000, this.options.timeoutMs));
    const { endpointConcurrency, merchantConcurrency } = this.options;
    // A connection of MikroORM's pool, used directly: the claim is one message (see claimDueDeliveries).
    const pool = this.orm.em.getConnection().getKnex().client as unknown as {
      acquireConnection(): Promise<ClaimConnection>;
      releaseConnection(connection: ClaimConnection): Promise<void>;
    };
    const connection = await pool.acquireConnection();
    try {
      return await claimDueDeliveries(connection, this.clock.now(), leaseMs, { endpointConcurrency, merchantConcurrency, max });
    } finally {
      await pool.releaseConnection(connection);
    }
  }

  private async deliver(job: ClaimedDelivery): Promise<void> {
    let result: WebhookHttpResult;
    try {
      // The event's environment's secret; during a rotation's overlap one signature per secret, space-separated.
      const secrets = await this.secrets.signing(job.subsidiaryId, job.mode);
      const timestamp = Math.floor(this.clock.now().getTime() / 1000);
      const headers = {
        ...webhookSignatureHeaders(secrets[0]!, job.eventId, timestamp, job.body),
        'webhook-signature': secrets.map((secret) => signWebhook(secret, job.eventId, timestamp, job.body)).join(' '),
        'content-type': 'application/json',
        'user-agent': USER_AGENT,
      };
      // The client refuses internal addresses (both environments) on every connection it opens.
      result = await this.http.post(job.url, job.body, headers, this.options.timeoutMs);
      if (result.refusedAddresses) {
        // The merchant's error names no address; the operators' log does (not the URL: its path or query may hold a token).
        const destination = webhookDestination(job.url);
        this.log.warn(
          { deliveryId: job.id, subsidiaryId: job.subsidiaryId, destination, addresses: result.refusedAddresses },
          'webhook destination refused: non-public address',
        );
      }
    } catch (err) {
      result = { statusCode: null, latencyMs: 0, error: `internal error: ${err instanceof Error ? err.message : String(err)}`, responseBody: null };
    }
    try {
      const recorded = await this.recordAttempt(job, result);
      const outcome: WebhookAttemptOutcome = {
        result: recorded,
        statusCode: result.statusCode,
        latencyMs: result.latencyMs,
        lagMs: job.lagMs,
        deliveryId: job.id,
        attempt: job.attemptCount + 1,
        orderReference: job.orderReference,
      };
      this.attemptListeners.emit(outcome);
    } catch (err) {
      // The lease runs out and the delivery is attempted again: at least once, maybe twice.
      this.log.error({ err, deliveryId: job.id }, 'recording a webhook attempt failed');
    }
  }

  /**
   * One statement (atomic, no transaction context): the attempt is always kept; the delivery
   * moves on only if our lease still holds (otherwise it ran out and another worker claimed the
   * delivery: the state is theirs); a delivered or dead delivery notes it on the order's timeline.
   */
  private async recordAttempt(job: ClaimedDelivery, result: WebhookHttpResult): Promise<WebhookAttemptOutcome['result']> {
    const now = this.clock.now();
    const attempts = job.attemptCount + 1;
    const ok = result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300;
    const state: DeliveryState = ok ? 'delivered' : attempts > this.options.retryDelaysMs.length ? 'dead' : 'pending';
    const nextAttemptAt = state === 'pending' ? new Date(now.getTime() + this.jittered(this.options.retryDelaysMs[attempts - 1]!)) : null;
    const timeline =
      job.orderId === null || state === 'pending'
        ? null
        : state === 'delivered'
          ? {
              event: TimelineEvents.webhookDelivered,
              description: `Webhook delivered to ${job.url}`,
              metadata: { eventId: job.eventId, url: job.url, attempts, statusCode: result.statusCode },
            }
          : {
              event: TimelineEvents.webhookFailed,
              description: `Webhook to ${job.url} failed after ${attempts} attempts`,
              metadata: { eventId: job.eventId, url: job.url, attempts, statusCode: result.statusCode, error: result.error },
            };
    const rows: Array<{ moved: boolean }> = await this.orm.em.getConnection().execute(
      `with attempt as (
         insert into webhook_attempt (delivery_id, status_code, latency_ms, error, response_body, created_at)
         select id, ?, ?, ?, ?, ? from webhook_delivery where id = ?
       ), moved as (
         update webhook_delivery
            set attempt_count = attempt_count + 1, locked_until = null, state = ?, delivered_at = ?,
                next_attempt_at = coalesce(?, next_attempt_at)
          where id = ? and state = 'pending' and locked_until = ?
         returning id
       ), noted as (
         insert into timeline_event (order_id, event, source, description, metadata, created_at)
         select ?, ?, 'system', ?, ?::jsonb, ? from moved where ?::boolean
       )
       select exists (select 1 from moved) as moved`,
      [
        result.statusCode,
        result.latencyMs,
        result.error,
        result.responseBody,
        now,
        job.id,
        state,
        state === 'delivered' ? now : null,
        nextAttemptAt,
        job.id,
        job.lease,
        job.orderId,
        timeline?.event ?? '',
        timeline?.description ?? null,
        timeline ? JSON.stringify(timeline.metadata) : null,
        new Date(),
        timeline !== null,
      ],
    );
    if (!rows[0]?.moved) return 'stale';
    if (nextAttemptAt) this.nextDueAt = Math.min(this.nextDueAt, nextAttemptAt.getTime());
    return state === 'pending' ? 'retry' : state;
  }

  /**
   * Runs `work` in one transaction on one pooled connection, through the connection itself:
   * not MikroORM's `transactional()`, whose transaction context (AsyncLocalStorage) would turn
   * on promise hooks for the whole process.
   */
  private async inTransaction<T>(work: (execute: Execute) => Promise<T>): Promise<T> {
    const connection = this.orm.em.getConnection();
    const trx = await connection.begin();
    try {
      const result = await work((sql, params) => connection.execute(sql, params, 'all', trx));
      await connection.commit(trx);
      return result;
    } catch (err) {
      await connection.rollback(trx).catch(() => undefined);
      throw err;
    }
  }

  private jittered(delayMs: number): number {
    const jitter = this.options.jitter ?? 0.1;
    return Math.max(0, Math.round(delayMs * (1 + (Math.random() * 2 - 1) * jitter)));
  }
}
