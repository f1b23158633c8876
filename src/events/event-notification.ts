import type { OrderStatusChange } from './order-status-bus';
import type { TenantScope } from '../merchants/tenant-cache';

/**
 * Credentials of an environment that stop working at `expiresAt`: api-keys replaced by a
 * rotation, or (at once) the dashboard sessions of a member whose role changed or who was removed.
 */
export interface KeysExpiry {
  environmentId: number;
  expiresAt: Date;
}

/**
 * What a notification carries: an order's state change (and whether it added a delivery), only
 * "a delivery is due", or api-keys that stop working.
 */
export type EventNotification =
  | { kind: 'order'; change: OrderStatusChange; delivery: boolean }
  | { kind: 'wake' }
  | { kind: 'keys'; expiry: KeysExpiry }
  | { kind: 'tenant'; scope: TenantScope };

/** A notification payload (well under PostgreSQL's 8000-byte NOTIFY limit: no order details, only the change). */
export function encodeNotification(notification: EventNotification): string {
  if (notification.kind === 'keys') return JSON.stringify({ k: 'keys', e: notification.expiry.environmentId, at: notification.expiry.expiresAt.toISOString() });
  if (notification.kind === 'tenant') return JSON.stringify({ k: 'tenant', e: notification.scope.environmentId, s: notification.scope.subsidiaryId });
  return JSON.stringify(notification.kind === 'order' ? { k: 'order', c: notification.change, d: notification.delivery } : { k: 'wake' });
}

export function decodeNotification(payload: string | undefined): EventNotification | null {
  if (!payload) return null;
  try {
    const parsed = JSON.parse(payload) as { k?: unknown; c?: Partial<OrderStatusChange>; d?: unknown; e?: unknown; at?: unknown };
    if (parsed.k === 'wake') return { kind: 'wake' };
    // Sent by the database's triggers on tenant settings (see TenantCaches): `e` an environment, `s` a merchant, neither: all.
    if (parsed.k === 'tenant') {
      const t = parsed as { e?: unknown; s?: unknown };
      return {
        kind: 'tenant',
        scope: { ...(typeof t.e === 'number' ? { environmentId: t.e } : {}), ...(typeof t.s === 'number' ? { subsidiaryId: t.s } : {}) },
      };
    }
    if (parsed.k === 'keys' && typeof parsed.e === 'number' && typeof parsed.at === 'string' && !Number.isNaN(Date.parse(parsed.at))) {
      return { kind: 'keys', expiry: { environmentId: parsed.e, expiresAt: new Date(parsed.at) } };
    }
    const c = parsed.c;
    if (
      parsed.k === 'order' &&
      c &&
      typeof c.eventId === 'string' &&
      typeof c.environmentId === 'number' &&
      typeof c.reference === 'string' &&
      typeof c.statusId === 'number' &&
      typeof c.status === 'string' &&
      typeof c.sequence === 'number'
    ) {
      return {
        kind: 'order',
        change: { eventId: c.eventId, environmentId: c.environmentId, reference: c.reference, statusId: c.statusId, status: c.status, sequence: c.sequence },
        delivery: parsed.d !== false,
      };
    }
  } catch {
    // not ours
  }
  return null;
}

/**
 * Changes whose transaction also added a webhook delivery, as the outbox wrote them. The change
 * itself keeps the shape subscribers see; this tells the fan-out, where the database does not
 * announce changes (Redis), to wake every instance's dispatcher rather than only the writer's.
 */
const changesWithDelivery = new WeakSet<OrderStatusChange>();

/** Whether the outbox noted that `change`'s transaction added a webhook delivery. */
export function addedDelivery(change: OrderStatusChange): boolean {
  return changesWithDelivery.has(change);
}

/** Notes that `change`'s transaction added a webhook delivery (the outbox, as it writes one). */
export function noteDeliveryAdded(change: OrderStatusChange): void {
  changesWithDelivery.add(change);
}
