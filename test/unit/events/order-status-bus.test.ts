import { OrderStatusBus, REMEMBERED_ORDERS, SUBSCRIBER_BUFFER, type OrderStatusChange } from '../../../src/events/order-status-bus';

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

  it("drops a change older than one of the same order already published, and only that order's", async () => {
    const bus = new OrderStatusBus();
    const subscriber = bus.subscribe(5);
    const other = { ...change(5, 1), eventId: 'other-1', reference: 'ORD-other' };
    bus.publish(change(5, 2));
    bus.publish(change(5, 1)); // arrived late (another instance's, through Redis)
    bus.publish(other); // another order of the same environment: its own sequence
    bus.publish(change(5, 3));
    const received = [];
    for (let i = 0; i < 3; i += 1) received.push((await subscriber.next()).value);
    expect(received.map((c) => `${c.reference}:${c.sequence}`)).toEqual(['ORD-5:2', 'ORD-other:1', 'ORD-5:3']);
    await subscriber.return!();
  });

  it('remembers the newest sequence of a bounded number of orders', async () => {
    const bus = new OrderStatusBus();
    const flooded = bus.subscribe(6);
    bus.publish(change(6, 5));
    for (let i = 0; i < REMEMBERED_ORDERS; i += 1) bus.publish({ ...change(6, 1), eventId: `x-${i}`, reference: `ORD-x-${i}` });
    const subscriber = bus.subscribe(6);
    // ORD-6 was the order changed least recently: forgotten, so its late change passes again,
    // and is remembered from then on.
    bus.publish(change(6, 4));
    bus.publish(change(6, 3));
    bus.publish(change(6, 6));
    const received = [(await subscriber.next()).value.sequence, (await subscriber.next()).value.sequence];
    expect(received).toEqual([4, 6]);
    await Promise.all([flooded.return!(), subscriber.return!()]);
  });
});
