import { createPubSub } from '@graphql-yoga/subscription';

/** What subscribers of `orderStatusChanged` receive; always about one tenant's order. */
export interface OrderStatusChange {
  eventId: string;
  environmentId: number;
  reference: string;
  statusId: number;
  status: string;
  sequence: number;
}

/**
 * Fan-out of committed order state changes to live subscribers. In one process this is an
 * in-memory pub/sub; across instances the events issue feeds it from PostgreSQL.
 */
export class OrderStatusBus {
  private readonly pubsub = createPubSub<{ [topic: string]: [OrderStatusChange] }>();

  publish(change: OrderStatusChange): void {
    this.pubsub.publish(topicOf(change.environmentId), change);
  }

  /** Events of one tenant only: the topic is the environment. */
  subscribe(environmentId: number): AsyncIterable<OrderStatusChange> {
    return this.pubsub.subscribe(topicOf(environmentId));
  }
}

const topicOf = (environmentId: number) => `order-status:${environmentId}`;
