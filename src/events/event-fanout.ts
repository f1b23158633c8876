import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { OrderStatusBus, OrderStatusChange } from './order-status-bus';
import type { TenantScope } from '../merchants/tenant-cache';

/** The PostgreSQL channel every instance LISTENs on (NOTIFY is per database). */
export const EVENTS_CHANNEL = 'pgw_events';

/**
 * Credentials of an environment that stop working at `expiresAt`: api-keys replaced by a
 * rotation, or (at once) the dashboard sessions of a member whose role changed or who was removed.
 */
export interface KeysExpiry {
  environmentId: number;
  expiresAt: Date;
}

/**
 * What a notification carries: an order's state change (and whether it added a delivery), only
 * "a delivery is due", or api-keys that stop working.
 */
export type EventNotification =
  | { kind: 'order'; change: OrderStatusChange; delivery: boolean }
  | { kind: 'wake' }
  | { kind: 'keys'; expiry: KeysExpiry }
  | { kind: 'tenant'; scope: TenantScope };

/** A notification payload (well under PostgreSQL's 8000-byte limit: no order details, only the change). */
export function encodeNotification(notification: EventNotification): string {
  if (notification.kind === 'keys') return JSON.stringify({ k: 'keys', e: notification.expiry.environmentId, at: notification.expiry.expiresAt.toISOString() });
  if (notification.kind === 'tenant') return JSON.stringify({ k: 'tenant', e: notification.scope.environmentId, s: notification.scope.subsidiaryId });
  return JSON.stringify(notification.kind === 'order' ? { k: 'order', c: notification.change, d: notification.delivery } : { k: 'wake' });
}

export function decodeNotification(payload: string | undefined): EventNotification | null {
  if (!payload) return null;
  try {
    const parsed = JSON.parse(payload) as { k?: unknown; c?: Partial<OrderStatusChange>; d?: unknown; e?: unknown; at?: unknown };
    if (parsed.k === 'wake') return { kind: 'wake' };
    // Sent by the database's triggers on tenant settings (see TenantCaches): `e` an environment, `s` a merchant, neither: all.
    if (parsed.k === 'tenant') {
      const t = parsed as { e?: unknown; s?: unknown };
      return {
        kind: 'tenant',
        scope: { ...(typeof t.e === 'number' ? { environmentId: t.e } : {}), ...(typeof t.s === 'number' ? { subsidiaryId: t.s } : {}) },
      };
    }
    if (parsed.k === 'keys' && typeof parsed.e === 'number' && typeof parsed.at === 'string' && !Number.isNaN(Date.parse(parsed.at))) {
      return { kind: 'keys', expiry: { environmentId: parsed.e, expiresAt: new Date(parsed.at) } };
    }
    const c = parsed.c;
    if (
      parsed.k === 'order' &&
      c &&
      typeof c.eventId === 'string' &&
      typeof c.environmentId === 'number' &&
      typeof c.reference === 'string' &&
      typeof c.statusId === 'number' &&
      typeof c.status === 'string' &&
      typeof c.sequence === 'number'
    ) {
      return {
        kind: 'order',
        change: { eventId: c.eventId, environmentId: c.environmentId, reference: c.reference, statusId: c.statusId, status: c.status, sequence: c.sequence },
        delivery: parsed.d !== false,
      };
    }
  } catch {
    // not ours
  }
  return null;
}

export interface EventLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLog: EventLog = { info: () => {}, warn: () => {}, error: () => {} };

/** The listeners of `onKeysExpiry`, shared by both fan-outs. */
class KeysExpiryListeners {
  private readonly listeners = new Set<(expiry: KeysExpiry) => void>();

  add(listener: (expiry: KeysExpiry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(expiry: KeysExpiry): void {
    for (const listener of this.listeners) listener(expiry);
  }
}

/**
 * How committed order changes reach this instance's OrderStatusBus and wake its webhook
 * dispatcher. Callers hand their changes to `afterCommit` after their transaction commits;
 * each change is published exactly once per instance whatever the database mode.
 */
export interface EventFanout {
  readonly mode: 'in-process' | 'postgres';
  afterCommit(changes: readonly OrderStatusChange[]): void;
  /** Tells every instance (this one included) that some api-keys of an environment stop working. */
  announceKeysExpiry(expiry: KeysExpiry): Promise<void>;
  /** Hears such announcements, from any instance; returns the unsubscribe. */
  onKeysExpiry(listener: (expiry: KeysExpiry) => void): () => void;
  /**
   * Hears changes of tenant settings committed by any instance or tool (the database's triggers
   * NOTIFY them; the embedded database has no other writer, so nothing arrives there).
   */
  onTenantChanged(listener: (scope: TenantScope) => void): () => void;
  /**
   * Runs `check` each time a lost LISTEN connection is back, before any event committed
   * meanwhile is published: whatever was revoked unheard (a rotated key, an ended session) must
   * be found out first. Returns the unsubscribe.
   */
  onReconnected(check: () => Promise<void>): () => void;
  /** False while changes made elsewhere might go unheard (the LISTEN connection is down). */
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
  private readonly keysExpiry = new KeysExpiryListeners();
  constructor(
    private readonly bus: OrderStatusBus,
    private readonly wake: () => void,
  ) {}

  afterCommit(changes: readonly OrderStatusChange[]): void {
    for (const change of changes) this.bus.publish(change);
    if (changes.length > 0) this.wake();
  }

  async announceKeysExpiry(expiry: KeysExpiry): Promise<void> {
    this.keysExpiry.emit(expiry);
  }

  onKeysExpiry(listener: (expiry: KeysExpiry) => void): () => void {
    return this.keysExpiry.add(listener);
  }

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

export interface PostgresFanoutOptions {
  connectionString: string;
  /** Changes committed since an instant (for the gap after a lost LISTEN connection). */
  changesSince(since: Date): Promise<OrderStatusChange[]>;
  channel?: string;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** How often the idle LISTEN connection is checked with a query. */
  healthCheckMs?: number;
}

/**
 * PostgreSQL server: OutboxService NOTIFYs in the writing transaction (delivered at commit,
 * to every instance on the database, this one included); this instance holds one LISTEN
 * connection and publishes what arrives to its bus, and wakes its dispatcher when a delivery
 * was added. `afterCommit` does nothing: publishing there too would publish twice.
 *
 * A lost connection is re-established with exponential backoff; events committed meanwhile
 * are read back from the outbox and published, de-duplicated by eventId.
 */
export class PostgresFanout implements EventFanout {
  readonly mode = 'postgres' as const;
  /** `application_name` of the LISTEN connection (lets operators and tests find it). */
  readonly applicationName = `pgw-events-${randomBytes(4).toString('hex')}`;
  private readonly channel: string;
  private client: Client | null = null;
  private stopped = true;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private disconnectedAt: Date | null = null;
  private readonly recent = new Set<string>();
  /** Live notifications held back while missed events are read back. */
  private held: OrderStatusChange[] | null = null;
  private log: EventLog = silentLog;
  private connecting: Promise<void> | undefined;
  private readonly keysExpiry = new KeysExpiryListeners();
  private readonly tenantListeners = new Set<(scope: TenantScope) => void>();
  private readonly reconnectChecks = new Set<() => Promise<void>>();

  constructor(
    private readonly bus: OrderStatusBus,
    private readonly wake: () => void,
    private readonly options: PostgresFanoutOptions,
  ) {
    this.channel = options.channel ?? EVENTS_CHANNEL;
  }

  afterCommit(): void {}

  /**
   * NOTIFYs on the LISTEN connection, so every instance hears it (this one through its own
   * LISTEN). Without that connection, at least this instance is told.
   */
  async announceKeysExpiry(expiry: KeysExpiry): Promise<void> {
    const client = this.client;
    if (client) {
      try {
        await client.query('select pg_notify($1, $2)', [this.channel, encodeNotification({ kind: 'keys', expiry })]);
        return;
      } catch (err) {
        this.log.warn({ err }, 'announcing expiring api-keys failed; only this instance is told');
      }
    }
    this.keysExpiry.emit(expiry);
  }

  onKeysExpiry(listener: (expiry: KeysExpiry) => void): () => void {
    return this.keysExpiry.add(listener);
  }

  onTenantChanged(listener: (scope: TenantScope) => void): () => void {
    this.tenantListeners.add(listener);
    return () => this.tenantListeners.delete(listener);
  }

  onReconnected(check: () => Promise<void>): () => void {
    this.reconnectChecks.add(check);
    return () => this.reconnectChecks.delete(check);
  }

  private tenantChangedEverywhere(): void {
    for (const listener of this.tenantListeners) {
      try {
        listener({});
      } catch {
        // A listener's fault is never the connection's.
      }
    }
  }

  /** True while the LISTEN connection is up. */
  get listening(): boolean {
    return this.client !== null;
  }

  get hearing(): boolean {
    return this.client !== null;
  }

  /** Connects once (a failure is logged and retried in the background). */
  async start(log?: EventLog): Promise<void> {
    if (log) this.log = log;
    if (!this.stopped) return;
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reconnectTimer);
    clearInterval(this.healthTimer);
    await this.connecting;
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => undefined);
  }

  private connect(): Promise<void> {
    this.connecting ??= this.doConnect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async doConnect(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: this.options.connectionString, application_name: this.applicationName, keepAlive: true });
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      client.removeAllListeners('notification');
      client.end().catch(() => undefined);
      if (this.stopped) return;
      this.disconnectedAt ??= new Date();
      // Changes made while not listening are never heard: forget every cached tenant setting now
      // (and again once listening, below), so nothing revoked meanwhile is served from a cache.
      this.tenantChangedEverywhere();
      this.log.warn({ err }, 'event LISTEN connection lost; reconnecting');
      this.scheduleReconnect();
    };
    client.on('error', (err) => onLost(err));
    client.on('end', () => onLost());
    client.on('notification', (msg) => {
      if (msg.channel === this.channel) this.receive(msg.payload);
    });
    try {
      await client.connect();
      await client.query(`listen "${this.channel}"`);
    } catch (err) {
      onLost(err as Error);
      return;
    }
    if (lost) return;
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.attempt = 0;
    this.startHealthCheck(client, onLost);
    const gapStart = this.disconnectedAt;
    this.disconnectedAt = null;
    if (gapStart) {
      // Notifications arriving from now on wait until the checks and the read-back are done.
      const held: OrderStatusChange[] = [];
      this.held = held;
      this.tenantChangedEverywhere();
      this.log.info({}, 'event LISTEN connection restored');
      await Promise.all(
        [...this.reconnectChecks].map((check) =>
          check().catch((err: unknown) => this.log.error({ err }, 'a check after the LISTEN connection returned failed')),
        ),
      );
      await this.catchUp(gapStart, held);
    }
  }

  /** After a connection attempt still in progress (maybe one already lost again), connect unless connected. */
  private async reconnect(): Promise<void> {
    await this.connecting;
    if (this.stopped || this.client) return;
    await this.connect();
  }

  private scheduleReconnect(): void {
    clearTimeout(this.reconnectTimer);
    const base = Math.min(this.options.maxBackoffMs ?? 10_000, (this.options.minBackoffMs ?? 100) * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 20);
    const delay = Math.round(base * (0.8 + Math.random() * 0.4));
    this.reconnectTimer = setTimeout(() => void this.reconnect(), delay);
    this.reconnectTimer.unref();
  }

  private startHealthCheck(client: Client, onLost: (err?: Error) => void): void {
    clearInterval(this.healthTimer);
    const every = this.options.healthCheckMs ?? 30_000;
    this.healthTimer = setInterval(() => {
      if (this.client !== client) return;
      const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('LISTEN connection health check timed out')), 5_000).unref());
      Promise.race([client.query('select 1'), timeout]).catch((err: Error) => onLost(err));
    }, every);
    this.healthTimer.unref();
  }

  /**
   * Publishes what was committed while no connection listened (the lookback covers commit
   * lag). Notifications arriving meanwhile wait until the read-back is published, so each
   * order's changes still reach subscribers in sequence.
   */
  private async catchUp(since: Date, held: OrderStatusChange[]): Promise<void> {
    this.held = held;
    try {
      const changes = await this.options.changesSince(new Date(since.getTime() - 10_000));
      for (const change of changes) this.publish(change);
    } catch (err) {
      this.log.error({ err }, 'catching up on missed events failed');
    } finally {
      if (this.held === held) this.held = null;
      for (const change of held) this.publish(change);
    }
    this.wake();
  }

  private receive(payload: string | undefined): void {
    const notification = decodeNotification(payload);
    if (!notification) return;
    if (notification.kind === 'keys') {
      this.keysExpiry.emit(notification.expiry);
      return;
    }
    if (notification.kind === 'tenant') {
      for (const listener of this.tenantListeners) listener(notification.scope);
      return;
    }
    if (notification.kind === 'order') {
      if (this.held) this.held.push(notification.change);
      else this.publish(notification.change);
    }
    if (notification.kind === 'wake' || notification.delivery) this.wake();
  }

  private publish(change: OrderStatusChange): void {
    if (this.recent.has(change.eventId)) return;
    this.recent.add(change.eventId);
    if (this.recent.size > 10_000) this.recent.delete(this.recent.values().next().value as string);
    this.bus.publish(change);
  }
}
