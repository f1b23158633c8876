import net from 'node:net';
import { validationError } from '../shared/errors';
import type { EnvironmentMode } from '../merchants/app-environment.entity';

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export interface WebhookUrlPolicy {
  /** ALLOW_PRIVATE_WEBHOOK_URLS: live URLs may name loopback, private or link-local addresses. */
  allowPrivate: boolean;
}

/**
 * The one rule for merchants' webhook URLs: http or https with a host; in the live
 * environment not a loopback, private, link-local or otherwise internal address (unless
 * ALLOW_PRIVATE_WEBHOOK_URLS), so that webhooks cannot be aimed at the gateway's own network.
 * Host names that resolve to such addresses are refused again at delivery time (see
 * `guardedLookup`). Returns the URL, trimmed.
 */
export function validateWebhookUrl(value: string, mode: EnvironmentMode, policy: WebhookUrlPolicy, field = 'WebhookUrl'): string {
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
  // Link-local addresses (cloud metadata services) are never a merchant's server, in any environment.
  if (isLinkLocalHost(parsed.hostname)) {
    throw validationError(`The ${field} field must not point to a link-local address.`);
  }
  if (mode === 'live' && !policy.allowPrivate && isInternalHost(parsed.hostname)) {
    throw validationError(`The ${field} field must not point to a loopback, private or link-local address.`);
  }
  return url;
}

const linkLocal = new net.BlockList();
linkLocal.addSubnet('169.254.0.0', 16, 'ipv4');
linkLocal.addSubnet('fe80::', 10, 'ipv6');

/** A URL host that is a link-local IPv4 or IPv6 address (169.254.0.0/16, fe80::/10). */
export function isLinkLocalHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  const ip = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  const family = net.isIP(ip);
  if (family === 0) return false;
  if (family === 6 && /^::ffff:/.test(ip)) {
    const mapped = ip.slice(7);
    if (net.isIP(mapped) === 4) return linkLocal.check(mapped, 'ipv4');
  }
  return linkLocal.check(ip, family === 4 ? 'ipv4' : 'ipv6');
}

/** A URL host (as `URL.hostname` gives it) that is an internal address or a local-only name. */
export function isInternalHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const ip = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return net.isIP(ip) !== 0 && isInternalAddress(ip);
}

const internalV4 = new net.BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this" network
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
] as const) {
  internalV6.addSubnet(network, prefix, 'ipv6');
}

/** True for a loopback, private, link-local, multicast or reserved IPv4/IPv6 address. */
export function isInternalAddress(address: string): boolean {
  const family = net.isIP(address);
  if (family === 4) return internalV4.check(address, 'ipv4');
  if (family !== 6) return false;
  const embedded = embeddedIpv4(address);
  if (embedded) return internalV4.check(embedded, 'ipv4');
  return internalV6.check(address, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible or NAT64 (64:ff9b::/96) IPv6 address. */
function embeddedIpv4(address: string): string | null {
  const groups = expandIpv6(address);
  if (!groups) return null;
  const top = groups.slice(0, 6);
  const mapped = top.slice(0, 5).every((g) => g === 0) && (top[5] === 0xffff || top[5] === 0);
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && top.slice(2).every((g) => g === 0);
  if (!mapped && !nat64) return null;
  if (mapped && top[5] === 0 && groups[6] === 0 && groups[7]! <= 1) return null; // :: and ::1 are IPv6 themselves
  return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
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
