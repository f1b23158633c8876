export interface EventLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLog: EventLog = { info: () => {}, warn: () => {}, error: () => {} };

/** What a transport tells the fan-out that started it. */
export interface TransportListener {
  /** A payload published by some instance (this one included) arrived. */
  receive(payload: string | undefined): void;
  /**
   * Listening again after `lost` (or for the first time after a failed start): called as soon
   * as the channel is subscribed, before any payload that arrives afterwards is received.
   */
  listening(): Promise<void>;
  /** Not listening any more (a lost connection, a failed first connection): told once per loss. */
  lost(err?: Error): void;
}

/**
 * How notifications travel between the instances of one deployment: one channel every
 * instance listens on, each through a connection of its own that is re-made when lost. Two
 * implementations: PostgreSQL LISTEN/NOTIFY (postgres-transport.ts) and Redis pub/sub
 * (redis-transport.ts). What is sent and what a lost connection costs (missed events read back
 * from the outbox, open sockets' keys checked again) is the fan-out's, the same for both.
 */
export interface EventTransport {
  /**
   * True when the database itself announces committed changes: the outbox NOTIFYs order
   * changes in the writing transaction and triggers NOTIFY changes of tenant settings, whoever
   * wrote them. False: the fan-out publishes them once the writer's transaction committed.
   */
  readonly announcedByDatabase: boolean;
  /** True while the channel is subscribed. */
  readonly listening: boolean;
  /** Sends a payload to every listening instance, this one included; throws when it cannot. */
  publish(payload: string): Promise<void>;
  start(listener: TransportListener, log: EventLog): Promise<void>;
  stop(): Promise<void>;
}
