import type { Redis } from 'ioredis';
import { closeRedisClient, REDIS_CONNECT_TIMEOUT_MS, redisClient } from '../db/redis';
import { silentLog, type EventLog, type EventTransport, type TransportListener } from './event-transport';

export interface RedisTransportOptions {
  url: string;
  channel: string;
  /** How often the subscribing connection is checked with a PING. */
  healthCheckMs?: number;
}

/**
 * Redis (or Valkey) pub/sub: a subscribing connection of this instance's own (a subscribed
 * connection can send nothing else) and a publishing one, both with the options every Redis
 * client of the service shares. Lost connections are re-made in the background; each time the
 * subscribing one is back it subscribes again and the fan-out catches up from the outbox.
 * Pub/sub keeps nothing: a message published while an instance is not subscribed never reaches
 * it, which is why the outbox, in PostgreSQL, stays the record.
 */
export class RedisTransport implements EventTransport {
  readonly announcedByDatabase = false;
  private subscriber: Redis | null = null;
  private publisher: Redis | null = null;
  private subscribed = false;
  /** Whether the current loss was told already (one `lost` per outage, however many failed reconnections). */
  private lostTold = false;
  private lastError: Error | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();
  private log: EventLog = silentLog;

  constructor(private readonly options: RedisTransportOptions) {}

  get listening(): boolean {
    return this.subscribed;
  }

  /**
   * Publishes on a connection made at first use. Publishing happens after commit, off the
   * request's path: a publish may wait for the connection (up to the connection timeout), then fails.
   */
  async publish(payload: string): Promise<void> {
    if (!this.publisher) {
      this.publisher = redisClient(this.options.url, { lazyConnect: true, enableOfflineQueue: true, commandTimeout: REDIS_CONNECT_TIMEOUT_MS });
      // A failed publish rejects its caller; the connection's own errors need no other handling.
      this.publisher.on('error', () => undefined);
    }
    const sent = this.publisher.publish(this.options.channel, payload);
    this.inFlight.add(sent);
    try {
      await sent;
    } finally {
      this.inFlight.delete(sent);
    }
  }

  /** Connects and subscribes, waiting at most the connection timeout (then retried in the background). */
  async start(listener: TransportListener, log: EventLog): Promise<void> {
    if (this.subscriber) return;
    this.log = log;
    const client = redisClient(this.options.url, { autoResubscribe: false });
    this.subscriber = client;
    const subscribedOnce = new Promise<void>((resolve) => {
      client.on('ready', () => {
        client.subscribe(this.options.channel).then(
          () => {
            if (this.subscriber !== client || client.status !== 'ready') return;
            this.subscribed = true;
            this.lostTold = false;
            this.lastError = undefined;
            resolve();
            void listener.listening();
          },
          // Subscribing failed on a live connection: drop it, the client connects again.
          (err: Error) => {
            this.lastError = err;
            client.disconnect(true);
          },
        );
      });
    });
    client.on('message', (channel: string, message: string) => {
      if (channel === this.options.channel) listener.receive(message);
    });
    client.on('error', (err: Error) => {
      this.lastError = err;
    });
    client.on('close', () => {
      this.subscribed = false;
      if (this.subscriber !== client || this.lostTold) return;
      this.lostTold = true;
      listener.lost(this.lastError);
      this.log.warn({ err: this.lastError }, 'event subscription to Redis lost; reconnecting');
    });
    this.startHealthCheck(client);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([subscribedOnce, new Promise<void>((resolve) => (timer = setTimeout(resolve, REDIS_CONNECT_TIMEOUT_MS)))]);
    clearTimeout(timer);
  }

  async stop(): Promise<void> {
    clearInterval(this.healthTimer);
    await Promise.allSettled([...this.inFlight]);
    const subscriber = this.subscriber;
    const publisher = this.publisher;
    this.subscriber = null;
    this.publisher = null;
    this.subscribed = false;
    await Promise.all([subscriber && closeRedisClient(subscriber), publisher && closeRedisClient(publisher)]);
  }

  /** A PING now and then: a connection that died silently is dropped and made again. */
  private startHealthCheck(client: Redis): void {
    this.healthTimer = setInterval(() => {
      if (this.subscriber !== client || !this.subscribed) return;
      client.ping().catch((err: Error) => {
        this.lastError = err;
        client.disconnect(true);
      });
    }, this.options.healthCheckMs ?? 30_000);
    this.healthTimer.unref();
  }
}
