import type { OrderStatusBus, OrderStatusChange } from './order-status-bus';
import type { TenantScope } from '../merchants/tenant-cache';
import { silentLog, type EventLog, type EventTransport } from './event-transport';
import { PostgresTransport } from './postgres-transport';
import { RedisTransport } from './redis-transport';
import { Listeners } from '../shared/listeners';
import { addedDelivery, decodeNotification, encodeNotification, type EventNotification, type KeysExpiry } from './event-notification';
import { within } from '../shared/time';

/** How long the work after a reconnection may wait on the database before it is given up on. */
export interface CatchUpTiming {
  /** One reconnection check (its own failure is its own to handle: it is logged and passed). */
  checkMs: number;
  /** One read-back page; one that takes longer counts as failed and is tried again. */
  pageMs: number;
  /** Pauses before trying a failed read-back page again (then it is given up, logged). */
  retryPausesMs: readonly number[];
}

const CATCH_UP_TIMING: CatchUpTiming = { checkMs: 10_000, pageMs: 10_000, retryPausesMs: [250, 1_000, 4_000] };

/** A promise that settles (with null) when `fire` is called. */
function stopSignal(): { settled: Promise<null>; fire: () => void } {
  let fire!: () => void;
  const settled = new Promise<null>((resolve) => (fire = () => resolve(null)));
  return { settled, fire };
}

/** The channel every instance listens on: PostgreSQL's (NOTIFY is per database) or Redis's. */
export const EVENTS_CHANNEL = 'pgw_events';

/**
 * How committed order changes reach this instance's OrderStatusBus and wake its webhook
 * dispatcher. Callers hand their changes to `afterCommit` after their transaction commits;
 * each change is published exactly once per instance whatever the mode.
 */
export interface EventFanout {
  readonly mode: 'in-process' | 'postgres' | 'redis';
  afterCommit(changes: readonly OrderStatusChange[]): void;
  /**
   * Tells every instance (this one included) that some api-keys of an environment stop working;
   * resolves false when the others could not be told (this one was).
   */
  announceKeysExpiry(expiry: KeysExpiry): Promise<boolean>;
  /** Hears such announcements, from any instance; returns the unsubscribe. */
  onKeysExpiry(listener: (expiry: KeysExpiry) => void): () => void;
  /**
   * Tells the other instances that tenant settings changed here (this instance's caches were
   * told in-process already). Nothing to do where the database's triggers announce every change.
   */
  announceTenantChanged(scope: TenantScope): void;
  /**
   * Hears changes of tenant settings committed by any instance (with PostgreSQL LISTEN, also by
   * any tool: the database's triggers NOTIFY them; the embedded database has no other writer).
   */
  onTenantChanged(listener: (scope: TenantScope) => void): () => void;
  /**
   * Runs `check` each time a lost connection is back, before any event committed meanwhile is
   * published: whatever was revoked unheard (a rotated key, an ended session) must be found out
   * first. Returns the unsubscribe.
   */
  onReconnected(check: () => Promise<void>): () => void;
  /** False while changes made elsewhere might go unheard (the listening connection is down). */
  readonly hearing: boolean;
  start(log?: EventLog): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Embedded database (PGlite behind a socket: NOTIFY does not cross it, and only this process
 * uses the database): publish to the local bus after commit.
 */
export class InProcessFanout implements EventFanout {
  readonly mode = 'in-process' as const;
  readonly hearing = true;
  private readonly keysExpiry = new Listeners<KeysExpiry>();
  constructor(
    private readonly bus: OrderStatusBus,
    private readonly wake: () => void,
  ) {}

  afterCommit(changes: readonly OrderStatusChange[]): void {
    for (const change of changes) this.bus.publish(change);
    if (changes.length > 0) this.wake();
  }

  async announceKeysExpiry(expiry: KeysExpiry): Promise<boolean> {
    this.keysExpiry.emit(expiry);
    return true;
  }

  onKeysExpiry(listener: (expiry: KeysExpiry) => void): () => void {
    return this.keysExpiry.add(listener);
  }

  announceTenantChanged(): void {}

  onTenantChanged(): () => void {
    return () => undefined;
  }

  /** Nothing to reconnect: every change is published in this process as it commits. */
  onReconnected(): () => void {
    return () => undefined;
  }

  async start(): Promise<void> {}
  async stop(): Promise<void> {}
}

/** Where a page of read-back changes ended: its last outbox row, in the order they are read. */
export interface OutboxPosition {
  /** created_at, as PostgreSQL writes it (microseconds kept). */
  at: string;
  sequence: number;
  id: string;
}

/** The waits before each new try of an announcement of expiring keys that failed to publish (about 15 s in all). */
export const ANNOUNCE_RETRY_DELAYS_MS = [250, 500, 1000, 2000, 4000, 8000];

/** A page of read-back changes; `next` is null on the last page. */
export interface ChangesPage {
  changes: OrderStatusChange[];
  next: OutboxPosition | null;
}

/** The order changes committed since an instant, a page at a time (after `after`). */
export type ChangesSince = (since: Date, after: OutboxPosition | null) => Promise<ChangesPage>;

/**
 * Several instances on one PostgreSQL server, whose notifications travel through a transport
 * (PostgreSQL LISTEN/NOTIFY, or Redis pub/sub with REDIS_URL): each instance listens on one
 * channel, publishes what arrives to its bus, and wakes its dispatcher when a delivery was added.
 *
 * Where the database announces changes (NOTIFY in the writing transaction, delivered at commit
 * to every instance, this one included), `afterCommit` does nothing: publishing there too would
 * publish twice. Otherwise `afterCommit` publishes to this instance's bus at once and to the
 * others through the transport.
 *
 * A lost connection is re-established by the transport; meanwhile the tenant caches are
 * bypassed, and once it is back the reconnection checks run (open sockets' keys), then events
 * committed meanwhile are read back from the outbox and published, de-duplicated by eventId.
 */
export class SharedFanout implements EventFanout {
  private disconnectedAt: Date | null = null;
  private readonly recent = new Set<string>();
  /** Live notifications held back while missed events are read back. */
  private held: OrderStatusChange[] | null = null;
  /** The read-back started last (each waits for the one before). */
  private lastCatchUp: Promise<void> = Promise.resolve();
  private log: EventLog = silentLog;
  private started = false;
  /** Counts stops: a read-back begun before a stop publishes nothing after it. */
  private generation = 0;
  /** Settles at the next stop, so a read-back in progress stops waiting on the database then. */
  private stopping = stopSignal();
  private readonly keysExpiry = new Listeners<KeysExpiry>();
  private readonly tenantListeners = new Listeners<TenantScope>();
  private readonly reconnectChecks = new Set<() => Promise<void>>();

  constructor(
    readonly mode: 'postgres' | 'redis',
    protected readonly transport: EventTransport,
    private readonly bus: OrderStatusBus,
    private readonly wake: () => void,
    private readonly changesSince: ChangesSince,
    private readonly timing: CatchUpTiming = CATCH_UP_TIMING,
  ) {}

  afterCommit(changes: readonly OrderStatusChange[]): void {
    if (this.transport.announcedByDatabase || changes.length === 0) return;
    for (const change of changes) {
      this.deliver(change);
      // A change that added a delivery wakes every instance's dispatcher (the writer's may have no
      // free worker, or none at all); the others are not woken for changes without one.
      this.send({ kind: 'order', change, delivery: addedDelivery(change) });
    }
    this.wake();
  }

  /**
   * Published through the transport, so every instance hears it (this one through its own
   * subscription). A failed publish tells this instance at once and is tried again a few times
   * (ANNOUNCE_RETRY_DELAYS_MS; hearing it twice only checks the sockets twice); one that never
   * goes through is logged as an error: the other instances close those sockets only when a
   * reconnection of theirs checks every socket.
   */
  async announceKeysExpiry(expiry: KeysExpiry): Promise<boolean> {
    const payload = encodeNotification({ kind: 'keys', expiry });
    // A stop (the service shutting down) ends the tries: the command line, which never starts the fan-out, tries them all.
    const stopped = this.stopping.settled;
    for (let attempt = 0; ; attempt += 1) {
      try {
        await this.transport.publish(payload);
        return true;
      } catch (err) {
        if (attempt === 0) this.keysExpiry.emit(expiry);
        const delay = ANNOUNCE_RETRY_DELAYS_MS[attempt];
        if (delay === undefined) {
          this.log.error({ err, environmentId: expiry.environmentId }, 'announcing expiring api-keys failed; only this instance was told');
          return false;
        }
        this.log.warn({ err, environmentId: expiry.environmentId }, 'announcing expiring api-keys failed; trying again');
        let timer: NodeJS.Timeout | undefined;
        const waited = await Promise.race([new Promise<true>((resolve) => (timer = setTimeout(() => resolve(true), delay))), stopped]);
        clearTimeout(timer);
        if (waited === null) return false;
      }
    }
  }

  onKeysExpiry(listener: (expiry: KeysExpiry) => void): () => void {
    return this.keysExpiry.add(listener);
  }

  announceTenantChanged(scope: TenantScope): void {
    if (!this.transport.announcedByDatabase) this.send({ kind: 'tenant', scope });
  }

  onTenantChanged(listener: (scope: TenantScope) => void): () => void {
    return this.tenantListeners.add(listener);
  }

  onReconnected(check: () => Promise<void>): () => void {
    this.reconnectChecks.add(check);
    return () => this.reconnectChecks.delete(check);
  }

  /** True while the listening connection is up. */
  get listening(): boolean {
    return this.transport.listening;
  }

  get hearing(): boolean {
    return this.transport.listening;
  }

  /** Connects once (a failure is logged and retried in the background). */
  async start(log?: EventLog): Promise<void> {
    if (log) this.log = log;
    if (this.started) return;
    this.started = true;
    await this.transport.start(
      {
        receive: (payload) => this.receive(payload),
        listening: () => this.listeningAgain(),
        lost: () => {
          this.disconnectedAt ??= new Date();
          // Changes made while not listening are never heard: forget every cached tenant setting now
          // (and again once listening), so nothing revoked meanwhile is served from a cache.
          this.tenantChangedEverywhere();
        },
      },
      this.log,
    );
  }

  /** Stops listening; also closes a connection opened only to publish (the command line's). */
  async stop(): Promise<void> {
    this.started = false;
    this.generation += 1;
    this.held = null;
    this.stopping.fire();
    this.stopping = stopSignal();
    await this.transport.stop();
  }

  /** Publishes through the transport after commit; a failure is logged (the outbox keeps the event). */
  private send(notification: EventNotification): void {
    this.transport.publish(encodeNotification(notification)).catch((err: unknown) => {
      this.log.warn({ err, kind: notification.kind }, 'publishing an event to the other instances failed');
    });
  }

  /**
   * Back after a loss: notifications arriving from now on wait (in `held`) until the checks and
   * the read-back are done, so each order's changes still reach subscribers in sequence.
   * Read-backs run one at a time, in the order the connection came back; what was held is
   * published once the last of them is done.
   */
  private listeningAgain(): Promise<void> {
    const gapStart = this.disconnectedAt;
    this.disconnectedAt = null;
    if (!gapStart) return Promise.resolve();
    this.held ??= [];
    this.tenantChangedEverywhere();
    this.log.info({}, 'event connection restored');
    const generation = this.generation;
    const done = this.lastCatchUp
      .then(() => this.catchUp(gapStart, generation))
      .catch((err: unknown) => this.log.error({ err }, 'catching up after the event connection returned failed'))
      .finally(() => {
        // A later read-back queued, or lost again meanwhile: what was heard waits for that gap's read-back too.
        if (this.lastCatchUp === done && !this.disconnectedAt) this.release();
        this.wake();
      });
    this.lastCatchUp = done;
    return done;
  }

  /** Runs the reconnection checks, then publishes what was committed while no connection listened (the lookback covers commit lag). */
  private async catchUp(since: Date, generation: number): Promise<void> {
    if (generation !== this.generation) return;
    const stopped = this.stopping.settled;
    const checks = Promise.all(
      [...this.reconnectChecks].map((check) =>
        within(check(), this.timing.checkMs, 'a check after the event connection returned').catch((err: unknown) =>
          this.log.error({ err }, 'a check after the event connection returned failed'),
        ),
      ),
    );
    await Promise.race([checks, stopped]);
    const from = new Date(since.getTime() - 10_000);
    let after: OutboxPosition | null = null;
    do {
      const page = await this.readBackPage(from, after, generation, stopped);
      if (!page || generation !== this.generation) return;
      for (const change of page.changes) this.publish(change);
      after = page.next;
    } while (after);
  }

  /**
   * One page of the read-back, tried again after a failure or a page that does not come in time
   * (the database may be the cause of the outage too) a few times with a growing pause; null when
   * it still fails, logged, or once the fan-out stops (at once, even mid-page): the subscribers then miss what was
   * committed meanwhile (webhooks do not: they come from the outbox).
   */
  private async readBackPage(from: Date, after: OutboxPosition | null, generation: number, stopped: Promise<null>): Promise<ChangesPage | null> {
    const pauses = this.timing.retryPausesMs;
    for (let attempt = 0; generation === this.generation; attempt += 1) {
      try {
        return await Promise.race([within(this.changesSince(from, after), this.timing.pageMs, 'a page of missed events'), stopped]);
      } catch (err) {
        if (attempt >= pauses.length) {
          this.log.error({ err }, 'catching up on missed events failed');
          return null;
        }
        this.log.warn({ err, attempt: attempt + 1 }, 'catching up on missed events failed; trying again');
        await Promise.race([new Promise((resolve) => setTimeout(resolve, pauses[attempt]).unref()), stopped]);
      }
    }
    return null;
  }

  /** Publishes the notifications held during the read-back, after it. */
  private release(): void {
    const held = this.held ?? [];
    this.held = null;
    for (const change of held) this.publish(change);
  }

  private tenantChangedEverywhere(): void {
    this.tenantListeners.emit({});
  }

  private receive(payload: string | undefined): void {
    const notification = decodeNotification(payload);
    if (!notification) return;
    if (notification.kind === 'keys') {
      this.keysExpiry.emit(notification.expiry);
      return;
    }
    if (notification.kind === 'tenant') {
      this.tenantListeners.emit(notification.scope);
      return;
    }
    if (notification.kind === 'order') {
      // Heard before the fan-out was told the connection is back (the transport's first
      // notification can come in the same packet as the answer to LISTEN): it waits for the read-back too.
      if (this.disconnectedAt) this.held ??= [];
      this.deliver(notification.change);
    }
    if (notification.kind === 'wake' || notification.delivery) this.wake();
  }

  /** To the bus now, or after the read-back in progress. */
  private deliver(change: OrderStatusChange): void {
    if (this.held) this.held.push(change);
    else this.publish(change);
  }

  private publish(change: OrderStatusChange): void {
    if (this.recent.has(change.eventId)) return;
    this.recent.add(change.eventId);
    if (this.recent.size > 10_000) this.recent.delete(this.recent.values().next().value as string);
    this.bus.publish(change);
  }
}

export interface PostgresFanoutOptions {
  connectionString: string;
  changesSince: ChangesSince;
  channel?: string;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** How often the idle LISTEN connection is checked with a query. */
  healthCheckMs?: number;
}

/** The fan-out over PostgreSQL LISTEN/NOTIFY (a PostgreSQL server without REDIS_URL). */
export class PostgresFanout extends SharedFanout {
  /** `application_name` of the LISTEN connection (lets operators and tests find it). */
  readonly applicationName: string;

  constructor(bus: OrderStatusBus, wake: () => void, options: PostgresFanoutOptions) {
    const transport = new PostgresTransport({ ...options, channel: options.channel ?? EVENTS_CHANNEL });
    super('postgres', transport, bus, wake, options.changesSince);
    this.applicationName = transport.applicationName;
  }
}

/** The fan-out over Redis pub/sub (REDIS_URL set): PostgreSQL keeps the outbox and sends no NOTIFY. */
export class RedisFanout extends SharedFanout {
  constructor(bus: OrderStatusBus, wake: () => void, options: { url: string; changesSince: ChangesSince; channel?: string; healthCheckMs?: number }) {
    super(
      'redis',
      new RedisTransport({ url: options.url, channel: options.channel ?? EVENTS_CHANNEL, healthCheckMs: options.healthCheckMs }),
      bus,
      wake,
      options.changesSince,
    );
  }
}
