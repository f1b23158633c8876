/** What subscribers of `orderStatusChanged` receive; always about one tenant's order. */
export interface OrderStatusChange {
  eventId: string;
  environmentId: number;
  reference: string;
  statusId: number;
  status: string;
  sequence: number;
}

/** Changes a subscriber may have waiting before the oldest are dropped (a consumer that stopped reading). */
export const SUBSCRIBER_BUFFER = 1000;

/** Orders whose newest published sequence the bus remembers (the least recently changed are forgotten). */
export const REMEMBERED_ORDERS = 10_000;

/**
 * Fan-out of committed order state changes to live subscribers in this process; the
 * EventFanout feeds it (across instances from PostgreSQL LISTEN/NOTIFY or Redis pub/sub, or
 * after commit in the embedded mode). Topics are environments, so a subscriber only ever sees its own
 * tenant's changes.
 *
 * A plain set of subscribers per environment with one small queue each: publishing to N
 * subscribers is N queue pushes (no event objects, no listener limits), and a subscriber that
 * stops reading keeps at most SUBSCRIBER_BUFFER changes (the oldest are dropped).
 *
 * Each order's changes reach subscribers in `sequence` order: a change older than one of the
 * same order already published here is dropped (it can arrive late when two instances change
 * one order within moments and tell the others through Redis). The bus remembers the newest
 * sequence of the REMEMBERED_ORDERS orders changed last while someone listened.
 */
export class OrderStatusBus {
  private readonly topics = new Map<number, Set<Subscription>>();
  private readonly newest = new Map<string, number>();

  publish(change: OrderStatusChange): void {
    const subscribers = this.topics.get(change.environmentId);
    if (!subscribers) return;
    if (this.isStale(change)) return;
    for (const subscriber of subscribers) subscriber.push(change);
  }

  /**
   * Changes of one environment from now on, until the iterator's `return()` is called (what
   * `for await … break` and GraphQL servers do when a client goes away).
   */
  subscribe(environmentId: number): AsyncIterableIterator<OrderStatusChange> {
    let subscribers = this.topics.get(environmentId);
    if (!subscribers) this.topics.set(environmentId, (subscribers = new Set()));
    const set = subscribers;
    const subscription = new Subscription(() => {
      set.delete(subscription);
      if (set.size === 0 && this.topics.get(environmentId) === set) this.topics.delete(environmentId);
    });
    set.add(subscription);
    return subscription;
  }

  /** True for a change older than (or the same as) the newest of its order published here; else remembers it. */
  private isStale(change: OrderStatusChange): boolean {
    const key = `${change.environmentId}:${change.reference}`;
    const seen = this.newest.get(key);
    if (seen !== undefined && change.sequence <= seen) return true;
    // Re-inserted, so the Map's first key is the order changed least recently.
    this.newest.delete(key);
    this.newest.set(key, change.sequence);
    if (this.newest.size > REMEMBERED_ORDERS) this.newest.delete(this.newest.keys().next().value as string);
    return false;
  }

  /** Live subscribers of one environment (for tests and metrics). */
  subscriberCount(environmentId: number): number {
    return this.topics.get(environmentId)?.size ?? 0;
  }

  /** Live subscribers of every environment (the instance's subscription count, for metrics). */
  totalSubscribers(): number {
    let total = 0;
    for (const subscribers of this.topics.values()) total += subscribers.size;
    return total;
  }
}

class Subscription implements AsyncIterableIterator<OrderStatusChange> {
  private queue: OrderStatusChange[] = [];
  private waiting: Array<(result: IteratorResult<OrderStatusChange>) => void> = [];
  private closed = false;

  constructor(private readonly onClose: () => void) {}

  push(change: OrderStatusChange): void {
    if (this.closed) return;
    const waiter = this.waiting.shift();
    if (waiter) {
      waiter({ value: change, done: false });
      return;
    }
    this.queue.push(change);
    if (this.queue.length > SUBSCRIBER_BUFFER) this.queue.shift();
  }

  next(): Promise<IteratorResult<OrderStatusChange>> {
    if (this.queue.length > 0) return Promise.resolve({ value: this.queue.shift()!, done: false });
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  return(): Promise<IteratorResult<OrderStatusChange>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  throw(error?: unknown): Promise<IteratorResult<OrderStatusChange>> {
    this.close();
    return Promise.reject(error);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<OrderStatusChange> {
    return this;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue = [];
    this.onClose();
    for (const waiter of this.waiting.splice(0)) waiter({ value: undefined, done: true });
  }
}
