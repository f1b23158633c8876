import { CloseCode } from 'graphql-ws';
import { within } from '../shared/time';

/** How long one key's check may take, from when it starts, before its sockets are closed unconfirmed. */
const CHECK_TIMEOUT_MS = 5_000;

/** The longest delay a Node timer takes (2^31 − 1 ms, about 24.8 days). */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** Keys checked at once: a few of the pool's connections, whatever the number of sockets. */
const CHECKS_AT_ONCE = 4;

/**
 * WebSocket close code 1013, "Try Again Later": graphql-ws clients reconnect after it and
 * authenticate again (4500, an internal error, would end their retries).
 */
export const TRY_AGAIN_LATER = 1013;
/** The reason sent with it when an api-key or session could not be checked (the database failed or was too slow). */
export const UNCHECKED_KEY_REASON = 'Try again later: the api-key or session could not be checked';

interface TrackedSocket {
  apiKey: string;
  close(code: number, reason: string): void;
}

/** What a check of a socket's key (or session) finds: it no longer works, or it works until `expiresAt` (epoch ms; null: no end). */
export type KeyStanding = false | { expiresAt: number | null };

/** Adds `socket` to the group of `key`; the returned function takes it out, and the group once empty (answering whether it was the last). */
function joinGroup<K>(groups: Map<K, Set<TrackedSocket>>, key: K, socket: TrackedSocket): () => boolean {
  let group = groups.get(key);
  if (!group) groups.set(key, (group = new Set()));
  const own = group;
  own.add(socket);
  return () => {
    own.delete(socket);
    if (own.size > 0 || groups.get(key) !== own) return false;
    groups.delete(key);
    return true;
  };
}

export interface KeySocketsLog {
  error(obj: object, msg?: string): void;
}

/**
 * The open GraphQL WebSockets of this instance by merchant environment, with the api-key each
 * was opened with. When an environment's keys are replaced, each socket's key is checked again
 * at the moment the replaced keys stop working (at once without a grace period), and the
 * sockets whose key no longer authenticates are closed with graphql-ws's `Forbidden` (4403).
 *
 * A key (or session) that works only until a known instant, a replaced key in its grace period
 * or a session, has the sockets opened with it (and only those) checked again at that instant,
 * known when the socket opens or whenever a check finds it so; the timer goes with the key's
 * last socket. An instance that did not hear a rotation (its event connection was down) learns
 * the end of the grace from its reconnection's check of every socket and closes them then.
 *
 * A check that fails or does not answer in time closes the socket too, with 1013 "Try Again
 * Later": a key that cannot be confirmed is not trusted, and the client's reconnection
 * authenticates anew. Each distinct key is checked once however many sockets share it, a few
 * keys at a time, and the time limit runs from the start of its own check (not from the queue).
 */
export class KeySockets {
  private readonly byEnvironment = new Map<number, Set<TrackedSocket>>();
  /** The same sockets by the key (or session) they were opened with. */
  private readonly byKey = new Map<string, Set<TrackedSocket>>();
  /** The checks of an environment announced to be due, by environment and instant (one timer for many sockets). */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** The check of one key's (or session's) sockets at its known end: one per key while it has sockets. */
  private readonly keyEnds = new Map<string, { at: number; timer: NodeJS.Timeout }>();

  constructor(
    /** Whether the key still authenticates (false for an expired or unknown key), and until when. */
    private readonly stillWorks: (apiKey: string) => Promise<KeyStanding>,
    private readonly now: () => Date,
    private readonly log: KeySocketsLog,
    private readonly checkTimeoutMs = CHECK_TIMEOUT_MS,
  ) {}

  /**
   * Tracks a socket until the returned function is called (when it closes); a key (or session)
   * that stops working at `expiresAt` (epoch ms) is checked again then.
   */
  add(environmentId: number, apiKey: string, close: TrackedSocket['close'], expiresAt: number | null = null): () => void {
    const socket: TrackedSocket = { apiKey, close };
    const leaveEnvironment = joinGroup(this.byEnvironment, environmentId, socket);
    const leaveKey = joinGroup(this.byKey, apiKey, socket);
    if (expiresAt !== null) this.keyEndsAt(apiKey, expiresAt);
    return () => {
      leaveEnvironment();
      if (leaveKey()) {
        // No socket left to close at the key's end.
        clearTimeout(this.keyEnds.get(apiKey)?.timer);
        this.keyEnds.delete(apiKey);
      }
    };
  }

  /** The key (or session) `apiKey` stops working at `at` (epoch ms): its sockets, and only those, are checked then. */
  private keyEndsAt(apiKey: string, at: number): void {
    const known = this.keyEnds.get(apiKey);
    if (known?.at === at) return;
    clearTimeout(known?.timer);
    const timer = setTimeout(() => {
      this.keyEnds.delete(apiKey);
      void this.checkSockets([...(this.byKey.get(apiKey) ?? [])]);
    }, this.delayUntil(at));
    timer.unref();
    this.keyEnds.set(apiKey, { at, timer });
  }

  /**
   * How long to wait for the instant `at`: a little after it, so the key is already expired by
   * the clock the check reads. A wait longer than a Node timer allows would fire at once: a far
   * end is checked at the longest wait, which finds the key working and waits again.
   */
  private delayUntil(at: number): number {
    return Math.min(Math.max(0, at - this.now().getTime()) + 50, LONGEST_TIMER_MS);
  }

  /** Some keys of the environment stop working at `expiresAt`: check its sockets then. */
  keysExpire(environmentId: number, expiresAt: Date): void {
    if (expiresAt.getTime() <= this.now().getTime()) {
      void this.check(environmentId);
      return;
    }
    const due = `${environmentId}@${expiresAt.getTime()}`;
    if (this.timers.has(due)) return;
    const timer = setTimeout(() => {
      this.timers.delete(due);
      void this.check(environmentId);
    }, this.delayUntil(expiresAt.getTime()));
    timer.unref();
    this.timers.set(due, timer);
  }

  /**
   * Checks every open socket's key (or session) now, closing those that no longer work: after
   * a time in which revocations may have gone unheard (the event connection was down).
   */
  async checkAll(): Promise<void> {
    await this.checkSockets([...this.byEnvironment.values()].flatMap((sockets) => [...sockets]));
  }

  /** Open sockets of one environment (for tests and metrics). */
  count(environmentId: number): number {
    return this.byEnvironment.get(environmentId)?.size ?? 0;
  }

  stop(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    for (const { timer } of this.keyEnds.values()) clearTimeout(timer);
    this.keyEnds.clear();
  }

  private check(environmentId: number): Promise<void> {
    return this.checkSockets([...(this.byEnvironment.get(environmentId) ?? [])]);
  }

  private async checkSockets(sockets: TrackedSocket[]): Promise<void> {
    const byKey = new Map<string, TrackedSocket[]>();
    for (const socket of sockets) {
      const sharing = byKey.get(socket.apiKey);
      if (sharing) sharing.push(socket);
      else byKey.set(socket.apiKey, [socket]);
    }
    const queue = [...byKey];
    let taken = 0;
    const worker = async () => {
      while (taken < queue.length) {
        const [apiKey, sharing] = queue[taken++]!;
        let standing: KeyStanding;
        try {
          standing = await within(this.stillWorks(apiKey), this.checkTimeoutMs, 'checking the api-key of a GraphQL WebSocket');
        } catch (err) {
          this.log.error({ err, sockets: sharing.length }, 'checking the api-key of a GraphQL WebSocket failed; its sockets are closed');
          for (const socket of sharing) socket.close(TRY_AGAIN_LATER, UNCHECKED_KEY_REASON);
          continue;
        }
        if (!standing) for (const socket of sharing) socket.close(CloseCode.Forbidden, 'Forbidden: the api-key or session no longer works');
        else if (standing.expiresAt !== null && this.byKey.has(apiKey)) this.keyEndsAt(apiKey, standing.expiresAt);
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHECKS_AT_ONCE, queue.length) }, worker));
  }
}
