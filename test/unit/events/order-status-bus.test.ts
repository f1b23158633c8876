import { OrderStatusBus, SUBSCRIBER_BUFFER, type OrderStatusChange } from '../../../src/events/order-status-bus';

const change = (environmentId: number, sequence: number): OrderStatusChange => ({
  eventId: `e-${environmentId}-${sequence}`,
  environmentId,
  reference: `ORD-${environmentId}`,
  statusId: 5,
  status: 'Successful',
  sequence,
});

describe('OrderStatusBus', () => {
  it('gives each subscriber its own tenant’s changes, in order, from the moment it subscribed', async () => {
    const bus = new OrderStatusBus();
    bus.publish(change(1, 0)); // nobody listens yet
    const a = bus.subscribe(1);
    const b = bus.subscribe(1);
    const other = bus.subscribe(2);
    bus.publish(change(1, 1));
    bus.publish(change(1, 2));
    expect((await a.next()).value.sequence).toBe(1);
    expect((await a.next()).value.sequence).toBe(2);
    expect((await b.next()).value.sequence).toBe(1);
    const pending = other.next();
    bus.publish(change(2, 7));
    expect((await pending).value).toEqual(change(2, 7));
    await Promise.all([a.return!(), b.return!(), other.return!()]);
    expect(bus.subscriberCount(1)).toBe(0);
  });

  it('ends a waiting consumer on return() and forgets the subscriber', async () => {
    const bus = new OrderStatusBus();
    const received: number[] = [];
    const iterator = bus.subscribe(3);
    const loop = (async () => {
      for await (const c of iterator) {
        received.push(c.sequence);
        if (c.sequence === 2) break;
      }
    })();
    bus.publish(change(3, 1));
    bus.publish(change(3, 2));
    bus.publish(change(3, 3));
    await loop;
    expect(received).toEqual([1, 2]);
    expect(bus.subscriberCount(3)).toBe(0);
    const waiting = bus.subscribe(3);
    const next = waiting.next();
    await waiting.return!();
    expect(await next).toEqual({ value: undefined, done: true });
  });

  it('keeps at most SUBSCRIBER_BUFFER changes for a subscriber that stopped reading', async () => {
    const bus = new OrderStatusBus();
    const slow = bus.subscribe(4);
    for (let i = 1; i <= SUBSCRIBER_BUFFER + 5; i += 1) bus.publish(change(4, i));
    expect((await slow.next()).value.sequence).toBe(6);
    await slow.return!();
  });
});
