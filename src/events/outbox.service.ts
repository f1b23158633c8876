import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AppEnvironment } from '../merchants/app-environment.entity';
import type { Order } from '../orders/order.entity';
import { ORDER_STATUS_NAMES, type OrderAggregate } from '../orders/order.service';
import { orderDetailsView } from '../orders/order-details.view';
import { OutboxEvent } from './outbox-event.entity';
import { WebhookDelivery } from './webhook-delivery.entity';
import { WebhookEndpoint } from './webhook-endpoint.entity';
import type { OrderStatusChange } from './order-status-bus';

/**
 * Writes the event of an order state change in the caller's transaction (transactional
 * outbox): the webhook body frozen with the order's full state, a per-order sequence number,
 * and a pending delivery when the environment has a webhook URL. Nothing is published
 * before commit: the caller hands the returned change to the bus after committing.
 */
export class OutboxService {
  constructor(private readonly publicUrl: string) {}

  async recordOrderChange(em: EntityManager, aggregate: OrderAggregate, notifyType: 'successful' | 'failed' | 'pending'): Promise<OrderStatusChange> {
    const order: Order = aggregate.order;
    order.eventSequence += 1;
    const eventId = randomUUID();
    const environment = em.getReference(AppEnvironment, typeof order.environment === 'object' ? order.environment.id : (order.environment as number));
    const payload = {
      notify: 'transaction',
      notifyType,
      eventId,
      sequence: order.eventSequence,
      data: orderDetailsView(aggregate, this.publicUrl),
      status: 'success',
      statusCode: '00',
      message: 'Order details fetched successfully',
    };
    const event = em.create(OutboxEvent, { id: eventId, environment, order, notify: 'transaction', notifyType, sequence: order.eventSequence, payload });
    // Only settled states are announced to webhooks (contract section 6); every change reaches subscribers.
    if (notifyType !== 'pending') {
      const endpoint = await em.findOne(WebhookEndpoint, { environment, isActive: true });
      if (endpoint) em.create(WebhookDelivery, { event, url: endpoint.url });
    }
    return {
      eventId,
      environmentId: environment.id,
      reference: order.reference,
      statusId: order.statusId,
      status: ORDER_STATUS_NAMES[order.statusId] ?? 'Unknown',
      sequence: order.eventSequence,
    };
  }
}
