import { promises as dns } from 'node:dns';
import net from 'node:net';
import type { WebhookResolver } from './webhook-url';

type Address = { address: string; family: number };

export interface WebhookDnsOptions {
  /** The nameservers asked (`address` or `address:port`); default: the system's. Tests point it at a server of their own. */
  servers?: readonly string[];
  /** How long one query waits for an answer, in ms (default 2000). */
  timeoutMs?: number;
  /** Queries sent to each nameserver before giving up (default 2). */
  tries?: number;
  /** Look-ups in flight at once; more wait for a free one, within their own deadline (default 16). */
  maxLookups?: number;
}

const DEFAULT_TIMEOUT_MS = 2000;
const DEFAULT_TRIES = 2;
const DEFAULT_MAX_LOOKUPS = 16;

/** What `localhost` and `*.localhost` always are, whatever DNS says (both families; the address rules judge them). */
const LOOPBACK: readonly Address[] = [
  { address: '127.0.0.1', family: 4 },
  { address: '::1', family: 6 },
];

/**
 * Resolves webhook hosts over DNS, A and AAAA records, with c-ares resolvers (`dns.Resolver`),
 * never with `dns.lookup`: that one runs getaddrinfo in libuv's thread pool (4 threads by
 * default, shared with file access, crypto and the database driver's own look-ups), so a
 * nameserver that never answers for one merchant's host held threads that every other look-up
 * and file access then waited for. Here a query is a UDP exchange on the event loop:
 *
 * - each look-up has one deadline, `timeoutMs × tries`, after which its queries are cancelled
 *   and it fails with `ETIMEOUT` (or returns the family that did answer);
 * - at most `maxLookups` run at once, each on a resolver of its own (so cancelling one cancels
 *   nothing else); a look-up waiting for a free one spends its own deadline waiting;
 * - look-ups of one name in flight at the same time share one query.
 *
 * The names `localhost` and `*.localhost` are loopback without asking DNS, and an IP address is
 * itself. The hosts file is not read: webhook hosts are public names.
 */
export class WebhookDns {
  private readonly timeoutMs: number;
  private readonly tries: number;
  private readonly maxLookups: number;
  private readonly free: dns.Resolver[] = [];
  private created = 0;
  private readonly waiting: Array<(resolver: dns.Resolver) => void> = [];
  private readonly inflight = new Map<string, Promise<Address[]>>();

  constructor(private readonly options: WebhookDnsOptions = {}) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.tries = options.tries ?? DEFAULT_TRIES;
    this.maxLookups = Math.max(1, options.maxLookups ?? DEFAULT_MAX_LOOKUPS);
    // The first resolver now: a malformed server fails here, not at the first delivery.
    this.free.push(this.createResolver());
  }

  /** How long a look-up may take, waiting for its turn included. */
  get deadlineMs(): number {
    return this.timeoutMs * this.tries;
  }

  readonly resolve: WebhookResolver = (hostname) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    const family = net.isIP(name);
    if (family !== 0) return Promise.resolve([{ address: name, family }]);
    if (isLocalhostName(name)) return Promise.resolve(LOOPBACK.map((a) => ({ ...a })));
    let pending = this.inflight.get(name);
    if (!pending) {
      pending = this.lookup(name).finally(() => this.inflight.delete(name));
      this.inflight.set(name, pending);
    }
    return pending;
  };

  private lookup(name: string): Promise<Address[]> {
    const timedOut = () => dnsError('ETIMEOUT', `${name} did not resolve within ${this.deadlineMs} ms`);
    return new Promise<Address[]>((resolve, reject) => {
      let resolver: dns.Resolver | undefined;
      let expired = false;
      const turn = (r: dns.Resolver) => {
        resolver = r;
        void Promise.allSettled([r.resolve4(name), r.resolve6(name)]).then(([v4, v6]) => {
          clearTimeout(timer);
          this.release(r);
          const addresses = [
            ...(v4.status === 'fulfilled' ? v4.value.map((address) => ({ address, family: 4 })) : []),
            ...(v6.status === 'fulfilled' ? v6.value.map((address) => ({ address, family: 6 })) : []),
          ];
          if (addresses.length > 0) return resolve(addresses);
          const errors = [v4, v6].flatMap((s) => (s.status === 'rejected' ? [s.reason as NodeJS.ErrnoException] : []));
          if (expired || errors.some((e) => e.code === 'ETIMEOUT' || e.code === 'ECANCELLED')) return reject(timedOut());
          reject(errors[0] ?? dnsError('ENODATA', `${name} has no address`));
        });
      };
      const timer = setTimeout(() => {
        expired = true;
        // Its queries end at once (ECANCELLED), and the turn above settles; still waiting: out of the queue.
        if (resolver) return resolver.cancel();
        const queued = this.waiting.indexOf(turn);
        if (queued >= 0) this.waiting.splice(queued, 1);
        reject(timedOut());
      }, this.deadlineMs);
      timer.unref();
      this.take(turn);
    });
  }

  private take(turn: (resolver: dns.Resolver) => void): void {
    const resolver = this.free.pop() ?? (this.created < this.maxLookups ? this.createResolver() : undefined);
    if (resolver) turn(resolver);
    else this.waiting.push(turn);
  }

  private release(resolver: dns.Resolver): void {
    const next = this.waiting.shift();
    if (next) next(resolver);
    else this.free.push(resolver);
  }

  private createResolver(): dns.Resolver {
    const resolver = new dns.Resolver({ timeout: this.timeoutMs, tries: this.tries });
    if (this.options.servers) resolver.setServers([...this.options.servers]);
    this.created += 1;
    return resolver;
  }
}

/** `localhost` and `*.localhost` (any case, final dot or not): names of this machine whatever DNS says. */
export function isLocalhostName(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  return host === 'localhost' || host.endsWith('.localhost');
}

function dnsError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}
