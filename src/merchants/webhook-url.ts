import net from 'node:net';
import { validationError } from '../shared/errors';
import { isLocalhostName, WebhookDns } from './webhook-dns';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** How long setting a URL waits for its host name to resolve before leaving the check to delivery. */
export const SET_TIME_RESOLVE_TIMEOUT_MS = 3000;

/** Resolves a host name to every address it has (a `WebhookDns` by default; tests inject their own). */
export type WebhookResolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

let settingTimeDns: WebhookDns | undefined;

/** Resolution of URLs being set: the system's nameservers, never libuv's thread pool (see `WebhookDns`). */
const settingTimeResolver: WebhookResolver = (hostname) => (settingTimeDns ??= new WebhookDns()).resolve(hostname);

/**
 * Which networks webhooks may reach. By default none of the service's own network: loopback,
 * private, link-local, unique-local, multicast, unspecified and other reserved addresses are
 * refused, in both environments. `allowedNetworks` (WEBHOOK_ALLOWED_NETWORKS) exempts
 * operator-chosen CIDRs, e.g. `127.0.0.0/8` for local development.
 */
export interface WebhookUrlPolicy {
  /** WEBHOOK_ALLOWED_NETWORKS: CIDRs (`a.b.c.d/n`, `x::/n`) exempted from the rule. */
  allowedNetworks?: readonly string[];
  /** ALLOW_PRIVATE_WEBHOOK_URLS (deprecated): exempts loopback, private and unique-local networks. */
  allowPrivate?: boolean;
  /** Host name resolution (default: a `WebhookDns` on the system's nameservers). */
  resolve?: WebhookResolver;
}

/** What the deprecated ALLOW_PRIVATE_WEBHOOK_URLS=true stands for. Link-local stays refused. */
export const LEGACY_PRIVATE_NETWORKS: readonly string[] = ['127.0.0.0/8', '10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '::1/128', 'fc00::/7'];

/**
 * The one rule for merchants' webhook URLs when they are set: http or https with a host; the
 * host must not be, nor resolve to, an internal address (unless its network is exempted).
 * A name that does not resolve now is accepted: delivery checks every address it connects to
 * anyway (`WebhookAddressPolicy`, used by the HTTP client). Returns the URL, trimmed.
 */
export async function validateWebhookUrl(value: string, policy: WebhookUrlPolicy, field = 'WebhookUrl'): Promise<string> {
  const url = value.trim();
  if (!url) throw validationError(`The ${field} field is required.`);
  if (url.length > MAX_WEBHOOK_URL_LENGTH) throw validationError(`The ${field} field must be at most ${MAX_WEBHOOK_URL_LENGTH} characters.`);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw validationError(`The ${field} field must be an http or https URL.`);
  }
  if ((parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || !parsed.hostname) {
    throw validationError(`The ${field} field must be an http or https URL.`);
  }
  const addresses = addressPolicyOf(policy);
  const refused = () => validationError(`The ${field} field must not point to a loopback, private, link-local or other internal address.`);
  const literal = hostAddress(parsed.hostname);
  if (literal !== null) {
    if (addresses.isRefused(literal)) throw refused();
    return url;
  }
  if (addresses.isRefusedName(parsed.hostname)) throw refused();
  // Loopback with some of it exempted: delivery connects to the exempted addresses only.
  if (isLocalhostName(parsed.hostname)) return url;
  const resolved = await resolveWithin(policy.resolve ?? settingTimeResolver, parsed.hostname.replace(/\.$/, ''), SET_TIME_RESOLVE_TIMEOUT_MS);
  if (resolved.some((a) => addresses.isRefused(a.address))) throw refused();
  return url;
}

/** The addresses of a name, or none when it does not resolve in time (delivery checks again). */
async function resolveWithin(resolve: WebhookResolver, hostname: string, ms: number): Promise<Array<{ address: string }>> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      resolve(hostname).catch(() => []),
      new Promise<[]>((done) => {
        timer = setTimeout(() => done([]), ms);
        timer.unref();
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Where a delivery goes, for per-destination limits: the URL's origin (scheme, host, port), so
 * that paths and query strings on one server share one allowance.
 */
export function webhookDestination(url: string): string {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? url : origin;
  } catch {
    return url;
  }
}

/** The IP address a URL host names (brackets and IPv6 zone removed), or null for a host name. */
export function hostAddress(hostname: string): string | null {
  const host = hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
  const ip = host.split('%')[0]!;
  return net.isIP(ip) ? ip : null;
}

const internalV4 = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network, unspecified
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  internalV4.addSubnet(network, prefix, 'ipv4');
}

const internalV6 = new net.BlockList();
for (const [network, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
  ['100::', 64], // discard-only
  ['2001::', 32], // Teredo: the IPv4 address it reaches is hidden (and relayed by whoever answers)
  ['2001:db8::', 32], // documentation
  ['64:ff9b:1::', 48], // local-use NAT64: translated into a network of the operator's own
] as const) {
  internalV6.addSubnet(network, prefix, 'ipv6');
}

/** True for a loopback, private, link-local, unique-local, multicast, unspecified or reserved IPv4/IPv6 address. */
export function isInternalAddress(address: string): boolean {
  const ip = canonicalAddress(address);
  if (ip === null) return false;
  return net.isIP(ip) === 4 ? internalV4.check(ip, 'ipv4') : internalV6.check(ip, 'ipv6');
}

/**
 * An address in the form the rules compare: IPv4 as dotted quad, and the IPv4 address inside
 * an IPv4-mapped (::ffff:a.b.c.d, ::ffff:7f00:1), IPv4-translated (::ffff:0:a.b.c.d),
 * IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) or 6to4 (2002:AABB:CCDD::/48) IPv6 address,
 * so that no IPv6 spelling of an IPv4 address escapes the IPv4 rules. Null when not an address.
 */
export function canonicalAddress(address: string): string | null {
  const text = (address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address).split('%')[0]!;
  const family = net.isIP(text);
  if (family === 4) return text;
  if (family !== 6) return null;
  return embeddedIpv4(text) ?? text.toLowerCase();
}

/** Checks addresses against the internal networks and the operator's exemptions. */
export class WebhookAddressPolicy {
  private readonly allowedV4 = new net.BlockList();
  private readonly allowedV6 = new net.BlockList();

  constructor(allowedNetworks: readonly string[] = []) {
    for (const cidr of allowedNetworks) {
      const parsed = parseCidr(cidr);
      if (!parsed) throw new Error(`not a network in CIDR notation: ${cidr}`);
      if (parsed.family === 4) this.allowedV4.addSubnet(parsed.network, parsed.prefix, 'ipv4');
      else this.allowedV6.addSubnet(parsed.network, parsed.prefix, 'ipv6');
    }
  }

  static of(policy: WebhookUrlPolicy): WebhookAddressPolicy {
    return new WebhookAddressPolicy([...(policy.allowedNetworks ?? []), ...(policy.allowPrivate ? LEGACY_PRIVATE_NETWORKS : [])]);
  }

  /** True when a webhook must not connect to this address (anything that is not an IP address included). */
  isRefused(address: string): boolean {
    const ip = canonicalAddress(address);
    if (ip === null) return true;
    if (!isInternalAddress(ip)) return false;
    return !(net.isIP(ip) === 4 ? this.allowedV4.check(ip, 'ipv4') : this.allowedV6.check(ip, 'ipv6'));
  }

  /** Names that mean this machine whatever DNS says (`localhost`, `*.localhost`): refused unless loopback is exempted. */
  isRefusedName(hostname: string): boolean {
    if (!isLocalhostName(hostname)) return false;
    return this.isRefused('127.0.0.1') && this.isRefused('::1');
  }
}

const cachedPolicies = new WeakMap<WebhookUrlPolicy, WebhookAddressPolicy>();

function addressPolicyOf(policy: WebhookUrlPolicy): WebhookAddressPolicy {
  let addresses = cachedPolicies.get(policy);
  if (!addresses) cachedPolicies.set(policy, (addresses = WebhookAddressPolicy.of(policy)));
  return addresses;
}

/** `a.b.c.d/n` or `x:y::/n` (a bare address means that one address). Null when malformed. */
export function parseCidr(text: string): { network: string; prefix: number; family: 4 | 6 } | null {
  const [address, prefixText, ...rest] = text.trim().split('/');
  if (rest.length > 0 || !address) return null;
  const family = net.isIP(address);
  if (family === 0) return null;
  const max = family === 4 ? 32 : 128;
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return null;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (prefix > max) return null;
  return { network: address, prefix, family: family as 4 | 6 };
}

/** The IPv4 address inside an IPv4-mapped, -translated or -compatible, NAT64 (64:ff9b::/96) or 6to4 (2002::/16) IPv6 address. */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (!groups) return null;
  const v4 = (high: number, low: number) => [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  // 6to4: the IPv4 address of the relay that receives the packets is groups 1 and 2.
  if (groups[0] === 0x2002) return v4(groups[1]!, groups[2]!);
  const top = groups.slice(0, 6);
  const mapped = top.slice(0, 5).every((g) => g === 0) && (top[5] === 0xffff || top[5] === 0);
  const translated = top.slice(0, 4).every((g) => g === 0) && top[4] === 0xffff && top[5] === 0;
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && top.slice(2).every((g) => g === 0);
  if (!mapped && !translated && !nat64) return null;
  if (mapped && top[5] === 0 && groups[6] === 0 && groups[7]! <= 1) return null; // :: and ::1 are IPv6 themselves
  return v4(groups[6]!, groups[7]!);
}

function expandIpv6(address: string): number[] | null {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const parts = dotted[1]!.split('.').map(Number);
    text = text.slice(0, -dotted[1]!.length) + `${((parts[0]! << 8) | parts[1]!).toString(16)}:${((parts[2]! << 8) | parts[3]!).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}
