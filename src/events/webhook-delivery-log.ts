import type { MikroORM } from '@mikro-orm/postgresql';
import { callerOf, type Tenant } from '../merchants/tenant';
import type { ReadRouting } from '../db/read-routing';
import { Conditions } from '../db/sql';
import { EntityRowMapper } from '../db/row-mapper';
import { OutboxEvent } from './outbox-event.entity';
import { WebhookAttempt } from './webhook-attempt.entity';
import { WebhookDelivery } from './webhook-delivery.entity';
import { deliveryView, type WebhookDeliveryFilter, type WebhookDeliveryView } from './webhook-delivery.view';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The environment's webhook deliveries with their attempts, read where list reads go (the read
 * replica, unless the caller wrote lately): two statements, no entity manager.
 */
export class WebhookDeliveryLog {
  private readonly delivery: EntityRowMapper<WebhookDelivery>;
  private readonly event: EntityRowMapper<OutboxEvent>;
  private readonly attempt: EntityRowMapper<WebhookAttempt>;

  constructor(
    orm: MikroORM,
    private readonly reads: ReadRouting,
  ) {
    this.delivery = new EntityRowMapper(orm, WebhookDelivery, 'd');
    // Not the payload: the log never shows it.
    this.event = new EntityRowMapper(orm, OutboxEvent, { alias: 'e', prefix: 'e_', columns: ['id', 'notify', 'notify_type', 'sequence'] });
    this.attempt = new EntityRowMapper(orm, WebhookAttempt, 'a');
  }

  /** Newest first, at most `filter.limit` (default 50, at most 200). The caller is authorized already. */
  async list(tenant: Tenant, filter: WebhookDeliveryFilter): Promise<WebhookDeliveryView[]> {
    const limit = Math.min(Math.max(Math.trunc(filter.limit ?? 50), 1), 200);
    const where = new Conditions().add('e.environment_id = ?', tenant.environmentId);
    if (filter.eventId) {
      if (!UUID.test(filter.eventId)) return [];
      where.add('e.id = ?', filter.eventId.toLowerCase());
    }
    if (filter.orderReference) where.add('o.reference = ? and o.environment_id = ?', filter.orderReference, tenant.environmentId);
    const run = this.reads.for(callerOf(tenant));
    const rows = await run(
      `select ${this.delivery.selectList}, ${this.event.selectList}, o.reference as order_reference
         from webhook_delivery d join outbox_event e on e.id = d.event_id left join checkout_order o on o.id = e.order_id
        where ${where.sql} order by d.id desc limit ?`,
      [...where.params, limit],
    );
    if (rows.length === 0) return [];
    const deliveries = rows.map((row) => {
      const delivery = this.delivery.map(row)!;
      const reference = row.order_reference as string | null;
      return { ...delivery, event: { ...this.event.map(row)!, order: reference === null ? null : { reference } } };
    });
    const attempts = await run(`select ${this.attempt.selectList} from webhook_attempt a where a.delivery_id = any(?::bigint[]) order by a.id`, [
      deliveries.map((d) => d.id),
    ]);
    const byDelivery = new Map<string, WebhookAttempt[]>();
    for (const row of attempts) {
      const attempt = this.attempt.map(row)!;
      const key = String(attempt.delivery.id);
      byDelivery.set(key, [...(byDelivery.get(key) ?? []), attempt]);
    }
    return deliveries.map((d) => deliveryView(d, byDelivery.get(String(d.id)) ?? []));
  }
}
