/**
 * Which tenant settings changed: an environment's, a merchant's (all its environments), or,
 * with neither, anything (a platform default fee rule, a lost notification connection).
 */
export interface TenantScope {
  environmentId?: number;
  subsidiaryId?: number;
}

interface Entry<V> {
  value: V;
  environmentId?: number;
  subsidiaryId?: number;
  loadedAt: number;
}

/** What a loader returns: the value (null: nothing to cache, e.g. an unknown key) and whose it is. */
export interface Loaded<V> {
  value: V;
  environmentId?: number;
  subsidiaryId?: number;
}

export interface TenantCachesOptions {
  /** Safety net: an entry is reloaded after this long even when no change was announced (0: no caching). */
  ttlMs: number;
  /** Entries per cache; beyond it the oldest is dropped. */
  maxEntries?: number;
  now?: () => number;
  /**
   * False while changes made elsewhere might go unheard (the event connection is down): the
   * caches are then emptied and bypassed, so nothing stale is served meanwhile.
   */
  hearing?: () => boolean;
}

/**
 * Per-instance caches of authentication and tenant settings (api-key → tenant, an
 * environment's encryption keys, fee rules and fee bearer, the merchant record), kept
 * correct across instances by invalidation: every change to the tables they read is
 * announced through the database (triggers NOTIFY in the writing transaction, so every
 * instance hears it at commit) or, when Redis carries the events, published by the writing
 * service after commit, and by the writing service in-process; each entry also
 * expires after a safety TTL. Invalidation is conservative: a load that started before an
 * invalidation is answered but not kept. Values whose validity depends on time (key expiry)
 * must be checked at use by the caller; the cache never decides that.
 */
export class TenantCaches {
  private readonly caches = new Set<ScopedCache<unknown>>();
  /** Bumped by every invalidation; a load started under an older generation is not stored. */
  generation = 0;
  readonly ttlMs: number;
  readonly maxEntries: number;
  readonly now: () => number;
  private readonly hearing: () => boolean;
  /** Invalidations so far (for tests and metrics). */
  invalidations = 0;

  constructor(options: TenantCachesOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries ?? 50_000;
    this.now = options.now ?? Date.now;
    this.hearing = options.hearing ?? (() => true);
  }

  create<V>(): ScopedCache<V> {
    const cache = new ScopedCache<V>(this);
    this.caches.add(cache as ScopedCache<unknown>);
    return cache;
  }

  /** Drops every entry of the scope (everything for an empty scope), on every cache. */
  invalidate(scope: TenantScope = {}): void {
    this.generation += 1;
    this.invalidations += 1;
    for (const cache of this.caches) cache.drop(scope);
  }

  /** Whether entries may be served now; when not, everything is dropped first. */
  usable(): boolean {
    if (this.ttlMs <= 0) return false;
    if (this.hearing()) return true;
    if (this.caches.size > 0) this.invalidate();
    return false;
  }
}

export class ScopedCache<V> {
  private readonly entries = new Map<string | number, Entry<V>>();
  private readonly loading = new Map<string | number, Promise<V | null>>();

  constructor(private readonly owner: TenantCaches) {}

  /**
   * The cached value of `key`, or what `load` finds (loaded once however many ask at the same
   * time). A null load is answered and not kept.
   */
  get(key: string | number, load: () => Promise<Loaded<V> | null>): V | null | Promise<V | null> {
    const owner = this.owner;
    if (!owner.usable()) return load().then((l) => (l ? l.value : null));
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      if (owner.now() - entry.loadedAt < owner.ttlMs) return entry.value;
      this.entries.delete(key);
    }
    let pending = this.loading.get(key);
    if (pending === undefined) {
      const generation = owner.generation;
      pending = load().then(
        (loaded) => {
          this.loading.delete(key);
          if (!loaded) return null;
          if (owner.generation === generation) {
            if (this.entries.size >= owner.maxEntries) this.entries.delete(this.entries.keys().next().value!);
            this.entries.set(key, { value: loaded.value, environmentId: loaded.environmentId, subsidiaryId: loaded.subsidiaryId, loadedAt: owner.now() });
          }
          return loaded.value;
        },
        (err) => {
          this.loading.delete(key);
          throw err;
        },
      );
      this.loading.set(key, pending);
    }
    return pending;
  }

  /** Forgets one key (e.g. a value found unusable at use). */
  delete(key: string | number): void {
    this.entries.delete(key);
  }

  get size(): number {
    return this.entries.size;
  }

  drop(scope: TenantScope): void {
    // In-flight loads are not stored after an invalidation (the generation changed), so a new
    // asker must not join them either.
    this.loading.clear();
    if (scope.environmentId === undefined && scope.subsidiaryId === undefined) {
      this.entries.clear();
      return;
    }
    for (const [key, entry] of this.entries) {
      if (
        (scope.environmentId !== undefined && entry.environmentId === scope.environmentId) ||
        (scope.subsidiaryId !== undefined && entry.subsidiaryId === scope.subsidiaryId)
      ) {
        this.entries.delete(key);
      }
    }
  }
}
