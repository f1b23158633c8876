import { createHash } from 'node:crypto';
import { randomHex } from '../shared/random';
import type { ApiKeyKind } from './api-key.entity';
import type { EnvironmentMode } from './app-environment.entity';

const KEY_PATTERN = /^PGW-(PUBLICKEY|SECRETKEY)-(TEST|LIVE)-[0-9a-f]{32}$/;

/** `PGW-PUBLICKEY-TEST-<32 hex>`, `PGW-SECRETKEY-LIVE-<32 hex>`, … (the documented key formats). */
export function generateApiKey(kind: ApiKeyKind, mode: EnvironmentMode): string {
  const kindMarker = kind === 'public' ? 'PUBLICKEY' : 'SECRETKEY';
  return `PGW-${kindMarker}-${mode.toUpperCase()}-${randomHex(16)}`;
}

/** What the key says of itself; undefined when it cannot be one of ours. */
export function describeApiKey(key: string): { kind: ApiKeyKind; mode: EnvironmentMode } | undefined {
  const m = KEY_PATTERN.exec(key);
  if (!m) return undefined;
  return { kind: m[1] === 'PUBLICKEY' ? 'public' : 'private', mode: m[2] === 'TEST' ? 'test' : 'live' };
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Enough to recognise a key in a dashboard, not enough to use it. */
export function apiKeyHint(key: string): string {
  return `${key.slice(0, 19)}…${key.slice(-4)}`;
}
