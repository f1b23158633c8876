import type { OutboxEvent } from './outbox-event.entity';
import type { WebhookAttempt } from './webhook-attempt.entity';
import type { DeliveryState, WebhookDelivery } from './webhook-delivery.entity';

/** One HTTP attempt of a delivery. */
export interface WebhookAttemptView {
  id: string;
  /** The receiver's HTTP status; null when none arrived in time. */
  statusCode: number | null;
  latencyMs: number;
  /** Why no status arrived (timeout, connection refused, …); null when one did. */
  error: string | null;
  /** At most the first 1 KiB of the receiver's answer. */
  responseBody: string | null;
  createdAt: Date;
}

/** One delivery of one event to one URL, with its attempts (oldest first). */
export interface WebhookDeliveryView {
  id: string;
  /** The eventId (also the `webhook-id` header); every attempt and redelivery carries it. */
  eventId: string;
  /** `transaction`, `refund` or `test_assess`. */
  notify: string;
  /** `successful`, `failed` (orders), `succeeded`, `failed` (refunds), `test_assess`. */
  notifyType: string;
  /** The order of a `transaction` event; null for a test ping. */
  orderReference: string | null;
  /** The event's per-order sequence number (0 for a test ping). */
  sequence: number;
  url: string;
  state: DeliveryState;
  attemptCount: number;
  /** When the next attempt is due; null once delivered or dead. */
  nextAttemptAt: Date | null;
  deliveredAt: Date | null;
  createdAt: Date;
  attempts: WebhookAttemptView[];
}

export interface WebhookDeliveryFilter {
  eventId?: string | null;
  orderReference?: string | null;
  /** Newest first, at most this many (default 50, at most 200). */
  limit?: number | null;
}

type DeliveryRow = Pick<WebhookDelivery, 'id' | 'url' | 'state' | 'attemptCount' | 'nextAttemptAt' | 'deliveredAt' | 'createdAt'> & {
  event: Pick<OutboxEvent, 'id' | 'notify' | 'notifyType' | 'sequence'> & { order: { reference: string } | null };
};

export function deliveryView(d: DeliveryRow, attempts: WebhookAttempt[]): WebhookDeliveryView {
  const event = d.event;
  return {
    id: String(d.id),
    eventId: event.id,
    notify: event.notify,
    notifyType: event.notifyType,
    orderReference: event.order ? event.order.reference : null,
    sequence: event.sequence,
    url: d.url,
    state: d.state,
    attemptCount: d.attemptCount,
    nextAttemptAt: d.state === 'pending' ? d.nextAttemptAt : null,
    deliveredAt: d.deliveredAt,
    createdAt: d.createdAt,
    attempts: attempts.map((a) => ({
      id: String(a.id),
      statusCode: a.statusCode,
      latencyMs: a.latencyMs,
      error: a.error,
      responseBody: a.responseBody,
      createdAt: a.createdAt,
    })),
  };
}
