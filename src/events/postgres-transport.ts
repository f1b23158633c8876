import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { silentLog, type EventLog, type EventTransport, type TransportListener } from './event-transport';

export interface PostgresTransportOptions {
  connectionString: string;
  channel: string;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** How often the idle LISTEN connection is checked with a query. */
  healthCheckMs?: number;
}

/**
 * PostgreSQL LISTEN/NOTIFY: one LISTEN connection of this instance's own, re-established with
 * exponential backoff when lost and checked with a query while idle (a connection that died
 * silently is found out). The outbox NOTIFYs in the writing transaction, which PostgreSQL
 * delivers at commit (never on rollback) to every instance on the database; `publish` NOTIFYs
 * on the LISTEN connection itself (or, in a process that does not listen, on one of its own).
 */
export class PostgresTransport implements EventTransport {
  readonly announcedByDatabase = true;
  /** `application_name` of the LISTEN connection (lets operators and tests find it). */
  readonly applicationName = `pgw-events-${randomBytes(4).toString('hex')}`;
  private client: Client | null = null;
  private stopped = true;
  private attempt = 0;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private connecting: Promise<void> | undefined;
  private listener: TransportListener | undefined;
  private log: EventLog = silentLog;

  constructor(private readonly options: PostgresTransportOptions) {}

  get listening(): boolean {
    return this.client !== null;
  }

  async publish(payload: string): Promise<void> {
    const client = this.client;
    if (client) {
      await client.query('select pg_notify($1, $2)', [this.options.channel, payload]);
      return;
    }
    if (!this.stopped) throw new Error('the LISTEN connection is down');
    // A process that does not listen (the command line) notifies on a connection of its own.
    const once = new Client({ connectionString: this.options.connectionString, application_name: this.applicationName, connectionTimeoutMillis: 5_000 });
    try {
      await once.connect();
      await once.query('select pg_notify($1, $2)', [this.options.channel, payload]);
    } finally {
      await once.end().catch(() => undefined);
    }
  }

  /** Connects once (a failure is reported as lost and retried in the background). */
  async start(listener: TransportListener, log: EventLog): Promise<void> {
    this.listener = listener;
    this.log = log;
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
    const channel = this.options.channel;
    const client = new Client({ connectionString: this.options.connectionString, application_name: this.applicationName, keepAlive: true });
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      client.removeAllListeners('notification');
      client.end().catch(() => undefined);
      if (this.stopped) return;
      this.listener?.lost(err);
      this.log.warn({ err }, 'event LISTEN connection lost; reconnecting');
      this.scheduleReconnect();
    };
    client.on('error', (err) => onLost(err));
    client.on('end', () => onLost());
    client.on('notification', (msg) => {
      if (msg.channel === channel) this.listener?.receive(msg.payload);
    });
    try {
      await client.connect();
      await client.query(`listen "${channel}"`);
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
    await this.listener?.listening();
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
}
