import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Order } from '../orders/order.entity';
import { ORDER_STATUS_NAMES } from '../orders/order-status';
import { type OrderAggregate } from '../orders/order.service';
import { orderDetailsView } from '../orders/order-details.view';
import type { DeliveryState } from './webhook-delivery.entity';
import type { OrderStatusChange } from './order-status-bus';
import type { Clock } from '../shared/clock';
import type { EnvironmentMode } from '../merchants/app-environment.entity';
import type { ChangesPage, OutboxPosition } from './event-fanout';
import { encodeNotification, noteDeliveryAdded, type EventNotification } from './event-notification';
import { webhookDestination } from '../merchants/webhook-url';
import type { ScopedCache, TenantCaches } from '../merchants/tenant-cache';

/** Runs one statement in the caller's transaction. */
export type Execute = (sql: string, params: unknown[]) => Promise<any[]>;

/** An order's outbox event as it is to be written: the event, its delivery (when `url`), the NOTIFY (when `notification`). */
interface OutboxEventRow {
  eventId: string;
  environmentId: number;
  orderId: number;
  notifyType: string;
  /** The frozen webhook body, as JSON text. */
  payload: string;
  createdAt: Date;
  url: string | null;
  destination: string | null;
  nextAttemptAt: Date;
  notifyChannel: string | null;
  notification: string | null;
}

/** An order change's outbox event (`"notify": "transaction"`), numbered in the order's sequence. */
export interface OutboxRow extends OutboxEventRow {
  sequence: number;
}

/** An after-sale event of an order, as its writer gives it. */
export interface OrderEventInput {
  environmentId: number;
  orderId: number;
  notify: 'refund' | 'dispute';
  notifyType: string;
  data: unknown;
}

/** An after-sale event as it is to be written; its NOTIFY (`notification`) only wakes the dispatchers, when there is a delivery. */
export interface OrderEventRow extends OutboxEventRow {
  notify: 'refund' | 'dispute';
}

/** An outbox event of any kind as a statement writes it. */
export type EventToWrite = OutboxEventRow & { notify: string; sequence: number };

/**
 * The one SQL that writes an outbox event, its webhook delivery (when it has a URL) and its
 * NOTIFY (when it has one) inside a caller's statement: `ctes` (named `event` and `delivery`) go
 * after the caller's own, `notified` in its select list (a subquery that is only a SELECT runs
 * when it is read). `when` is the caller's SQL condition for writing anything (its own write
 * happened). `placeholder(i)` names the i-th of `outboxEventParams`' parameters; each is used
 * once, in order, so `?` placeholders work too.
 */
export function outboxEventSql(when: string, placeholder: (i: number) => string): { ctes: string; notified: string } {
  const p = placeholder;
  return {
    ctes: `event as (
          insert into outbox_event (id, environment_id, order_id, notify, notify_type, sequence, payload, created_at)
          select ${p(0)}::uuid, ${p(1)}::int, ${p(2)}::int, ${p(3)}::varchar, ${p(4)}::varchar, ${p(5)}::int, ${p(6)}::json, ${p(7)}::timestamptz
           where ${when} returning id
        ), delivery as (
          insert into webhook_delivery (event_id, url, destination, next_attempt_at)
          select id, ${p(8)}::text, ${p(9)}::text, ${p(10)}::timestamptz from event where ${p(11)}::boolean
        )`,
    notified: `(select pg_notify(n.channel, n.message) from (select ${p(12)}::text as channel, ${p(13)}::text as message) n
          where n.channel is not null and exists (select 1 from event)) as notified`,
  };
}

/** The parameters of `outboxEventSql`, in its order; all null for no event. */
export function outboxEventParams(row: EventToWrite | null): unknown[] {
  if (row === null) return Array<null>(14).fill(null);
  const notifying = row.notifyChannel !== null && row.notification !== null;
  return [
    row.eventId,
    row.environmentId,
    row.orderId,
    row.notify,
    row.notifyType,
    row.sequence,
    row.payload,
    row.createdAt,
    row.url,
    row.destination,
    row.nextAttemptAt,
    row.url !== null,
    notifying ? row.notifyChannel : null,
    notifying ? row.notification : null,
  ];
}

/** The outbox write of the entity-manager paths: the event alone in its statement (`?` placeholders). */
const EVENT_ALONE = outboxEventSql('true', () => '?');

/** A delivery as written, with the event it delivers (what the delivery log shows). */
export interface RecordedDelivery {
  id: string;
  url: string;
  state: DeliveryState;
  attemptCount: number;
  nextAttemptAt: Date;
  deliveredAt: Date | null;
  createdAt: Date;
  event: { id: string; notify: string; notifyType: string; sequence: number; order: { reference: string } | null };
}

const DELIVERY_COLUMNS = 'id, url, state, attempt_count, next_attempt_at, delivered_at, created_at';

function deliveryOf(row: any): Omit<RecordedDelivery, 'event'> {
  return {
    id: String(row.id),
    url: row.url,
    state: row.state,
    attemptCount: Number(row.attempt_count),
    nextAttemptAt: new Date(row.next_attempt_at),
    deliveredAt: row.delivered_at === null ? null : new Date(row.delivered_at),
    createdAt: new Date(row.created_at),
  };
}

/**
 * Writes the event of an order state change in the caller's transaction (transactional
 * outbox): the webhook body frozen with the order's full state, a per-order sequence number,
 * and a pending delivery when the environment has a webhook URL. Nothing is published
 * before commit: the caller hands the returned change to the EventFanout after committing.
 * With PostgreSQL LISTEN/NOTIFY the same transaction also NOTIFYs `notifyChannel`, which
 * PostgreSQL delivers to every instance's LISTEN connection at commit (and never on rollback);
 * with Redis pub/sub nothing is sent here and the fan-out publishes after commit.
 */
export class OutboxService {
  constructor(
    private readonly publicUrl: string,
    private readonly clock: Clock,
    /** The NOTIFY channel with LISTEN/NOTIFY; null in the embedded mode (NOTIFY does not leave PGlite) and with Redis. */
    private readonly notifyChannel: string | null = null,
    caches?: TenantCaches,
  ) {
    this.endpoints = caches?.create<{ url: string | null }>();
  }

  /** Each environment's active webhook URL (or none), cached per instance: webhook_endpoint's trigger invalidates it everywhere. */
  private readonly endpoints?: ScopedCache<{ url: string | null }>;

  /** The environment's active webhook URL, read (on a miss) by `execute`, in the caller's transaction. */
  private async endpointUrl(execute: Execute, environmentId: number): Promise<string | null> {
    const load = async () => {
      const rows = await execute('select url from webhook_endpoint where environment_id = ? and is_active limit 1', [environmentId]);
      return { value: { url: (rows[0]?.url as string | undefined) ?? null }, environmentId };
    };
    const found = this.endpoints ? await this.endpoints.get(environmentId, load) : (await load()).value;
    return found?.url ?? null;
  }

  /** Each environment's mode (it never changes), remembered once read: every payload says whether it is live. */
  private readonly modes = new Map<number, EnvironmentMode>();

  private async livemode(execute: Execute, environmentId: number): Promise<boolean> {
    let mode = this.modes.get(environmentId);
    if (mode === undefined) {
      const [row] = await execute('select mode from app_environment where id = ?', [environmentId]);
      mode = row.mode as EnvironmentMode;
      if (this.modes.size >= 100_000) this.modes.clear();
      this.modes.set(environmentId, mode);
    }
    return mode === 'live';
  }

  /** Statements in `em`'s transaction (events with a NOTIFY must be written in one: it is sent at commit). */
  private statementsOf(em: EntityManager): Execute {
    if (this.notifyChannel && !em.isInTransaction()) throw new Error('outbox events must be written inside a transaction');
    const connection = em.getConnection();
    const trx = em.getTransactionContext();
    return (sql, params) => connection.execute(sql, params, 'all', trx);
  }

  /** One statement: the event, its delivery (when it has a URL) and its NOTIFY (when it has one). */
  private async write(execute: Execute, row: EventToWrite): Promise<void> {
    await execute(`with ${EVENT_ALONE.ctes} select ${EVENT_ALONE.notified}`, outboxEventParams(row));
  }

  /**
   * After the caller numbered the event (`eventSequence + 1`) and flushed it with its changes, so
   * that the body carries the order as verify returns it (its dateUpdated included):
   * the endpoint lookup, then one statement that writes the event, its delivery and the
   * NOTIFY (two round trips where the unit of work took four or five).
   */
  async recordOrderChange(
    em: EntityManager,
    aggregate: OrderAggregate,
    notifyType: 'successful' | 'failed' | 'pending' | 'authorized' | 'voided',
  ): Promise<OrderStatusChange> {
    const inTransaction = this.statementsOf(em);
    const { change, row } = await this.composeOrderChange(inTransaction, aggregate, notifyType);
    await this.write(inTransaction, { ...row, notify: 'transaction' });
    return change;
  }

  /**
   * The event of an order state change as it is to be written (the caller writes it in its own
   * transaction, see recordOrderChange): the webhook body frozen with the order as it now stands,
   * the webhook URL (none for `pending`: only outcomes go to webhooks) and the NOTIFY text.
   * `execute` (the caller's transaction) serves the endpoint and mode lookups on a cache miss.
   */
  async composeOrderChange(
    execute: Execute,
    aggregate: OrderAggregate,
    notifyType: 'successful' | 'failed' | 'pending' | 'authorized' | 'voided',
  ): Promise<{ change: OrderStatusChange; row: OutboxRow }> {
    const order: Order = aggregate.order;
    const eventId = randomUUID();
    const environmentId = typeof order.environment === 'object' ? order.environment.id : (order.environment as number);
    const payload = {
      notify: 'transaction',
      notifyType,
      eventId,
      livemode: await this.livemode(execute, environmentId),
      sequence: order.eventSequence,
      data: orderDetailsView(aggregate, this.publicUrl),
      status: 'success',
      statusCode: '00',
      message: 'Order details fetched successfully',
    };
    const change: OrderStatusChange = {
      eventId,
      environmentId,
      reference: order.reference,
      statusId: order.statusId,
      status: ORDER_STATUS_NAMES[order.statusId] ?? 'Unknown',
      sequence: order.eventSequence,
    };
    // Only outcomes are announced to webhooks (Successful, Failed, Authorized, Voided); every change reaches subscribers.
    const url = notifyType === 'pending' ? null : await this.endpointUrl(execute, environmentId);
    const row: OutboxRow = {
      ...this.eventRow({ eventId, environmentId, orderId: order.id, notifyType, payload, url }),
      sequence: order.eventSequence,
      notification: this.notifyChannel ? encodeNotification({ kind: 'order', change, delivery: url !== null }) : null,
    };
    // Whoever writes the row commits the delivery with it; the fan-out after that commit reads this mark.
    if (url !== null) noteDeliveryAdded(change);
    return { change, row };
  }

  /**
   * An after-sale event of an order (`"notify": "refund"` or `"dispute"`) in the caller's
   * transaction: `{ notify, notifyType, eventId, livemode, data }` frozen as delivered (`data` as
   * GraphQL shows it: decimal strings, ISO times), a pending delivery when the environment has a
   * webhook URL, and the NOTIFY that wakes the dispatchers. It changes no order status, so it
   * reaches no status subscriber. Returns whether a delivery was written (the caller wakes this
   * instance's dispatcher after commit).
   */
  async recordOrderEvent(em: EntityManager, event: OrderEventInput): Promise<boolean> {
    const execute = this.statementsOf(em);
    const row = await this.composeOrderEvent(execute, event);
    await this.write(execute, { ...row, sequence: 0 });
    return row.url !== null;
  }

  /**
   * An after-sale event as it is to be written (see recordOrderEvent; a caller writing plain SQL
   * writes it in its own statement): the frozen body, the webhook URL, and the wake-up NOTIFY text
   * (null when there is no delivery to wake for, or no NOTIFY channel).
   */
  async composeOrderEvent(execute: Execute, event: OrderEventInput): Promise<OrderEventRow> {
    const eventId = randomUUID();
    const payload = {
      notify: event.notify,
      notifyType: event.notifyType,
      eventId,
      livemode: await this.livemode(execute, event.environmentId),
      data: event.data,
    };
    const url = await this.endpointUrl(execute, event.environmentId);
    return {
      ...this.eventRow({ eventId, environmentId: event.environmentId, orderId: event.orderId, notifyType: event.notifyType, payload, url }),
      notify: event.notify,
      notification: url !== null && this.notifyChannel ? encodeNotification({ kind: 'wake' }) : null,
    };
  }

  /** An event row of the order: its body frozen as JSON text, its delivery due now (when `url`); the NOTIFY text is the caller's. */
  private eventRow(event: {
    eventId: string;
    environmentId: number;
    orderId: number;
    notifyType: string;
    payload: object;
    url: string | null;
  }): Omit<OutboxEventRow, 'notification'> {
    return {
      ...event,
      payload: JSON.stringify(event.payload),
      createdAt: new Date(),
      destination: event.url === null ? null : webhookDestination(event.url),
      nextAttemptAt: this.clock.now(),
      notifyChannel: this.notifyChannel,
    };
  }

  /**
   * A test ping (`"notify": "test_assess"`) to the given URL, with its pending delivery and the
   * NOTIFY that wakes the dispatchers, in one statement of the caller's transaction. Returns the
   * delivery.
   */
  async recordTestPing(execute: Execute, environmentId: number, url: string): Promise<RecordedDelivery> {
    const eventId = randomUUID();
    const now = this.clock.now();
    const payload = {
      notify: 'test_assess',
      notifyType: 'test_assess',
      eventId,
      livemode: await this.livemode(execute, environmentId),
      sequence: 0,
      data: null,
      status: 'success',
      statusCode: '00',
      message: 'Webhook test ping',
    };
    // Stamped with the service clock: the test-ping rate limit counts by it.
    const rows = await execute(
      `with event as (
         insert into outbox_event (id, environment_id, order_id, notify, notify_type, sequence, payload, created_at)
         values (?, ?, null, 'test_assess', 'test_assess', 0, ?::json, ?) returning id
       )
       insert into webhook_delivery (event_id, url, destination, next_attempt_at) select id, ?, ?, ? from event
       returning ${DELIVERY_COLUMNS}`,
      [eventId, environmentId, JSON.stringify(payload), now, url, webhookDestination(url), now],
    );
    await this.notify(execute, { kind: 'wake' });
    return { ...deliveryOf(rows[0]), event: { id: eventId, notify: 'test_assess', notifyType: 'test_assess', sequence: 0, order: null } };
  }

  /** A new pending delivery of a stored event (redelivery on request), in the caller's transaction. */
  async recordRedelivery(execute: Execute, event: RecordedDelivery['event'], url: string): Promise<RecordedDelivery> {
    const rows = await execute(`insert into webhook_delivery (event_id, url, destination, next_attempt_at) values (?, ?, ?, ?) returning ${DELIVERY_COLUMNS}`, [
      event.id,
      url,
      webhookDestination(url),
      this.clock.now(),
    ]);
    await this.notify(execute, { kind: 'wake' });
    return { ...deliveryOf(rows[0]), event };
  }

  /**
   * Order changes committed since an instant, oldest first, a page of at most `limit` at a time:
   * what a listening connection missed while it was down. `after` is the `next` of the page
   * before; `next` is null on the last page.
   */
  async changesSince(em: EntityManager, since: Date, after: OutboxPosition | null = null, limit = 1000): Promise<ChangesPage> {
    const rows: Array<{
      id: string;
      environment_id: number;
      sequence: number;
      payload: { data?: { orderReference?: unknown; statusId?: unknown; status?: unknown } };
      position_at: string;
    }> = await em.getConnection().execute(
      `select id, environment_id, sequence, payload, created_at::text as position_at from outbox_event
        where notify = 'transaction' and created_at >= ?${after ? ' and (created_at, sequence, id) > (?::timestamptz, ?::int, ?::uuid)' : ''}
        order by created_at, sequence, id limit ?`,
      after ? [since, after.at, after.sequence, after.id, limit] : [since, limit],
    );
    const last = rows[rows.length - 1];
    const changes = rows.flatMap((row) => {
      const data = row.payload?.data;
      if (!data || typeof data.orderReference !== 'string' || typeof data.statusId !== 'number') return [];
      return [
        {
          eventId: row.id,
          environmentId: row.environment_id,
          reference: data.orderReference,
          statusId: data.statusId,
          status: typeof data.status === 'string' ? data.status : (ORDER_STATUS_NAMES[data.statusId] ?? 'Unknown'),
          sequence: row.sequence,
        },
      ];
    });
    return { changes, next: rows.length === limit && last ? { at: last.position_at, sequence: last.sequence, id: last.id } : null };
  }

  /** NOTIFY in the caller's transaction: PostgreSQL delivers it at commit, never on rollback. */
  private async notify(execute: Execute, notification: EventNotification): Promise<void> {
    if (!this.notifyChannel) return;
    await execute('select pg_notify(?, ?)', [this.notifyChannel, encodeNotification(notification)]);
  }
}
