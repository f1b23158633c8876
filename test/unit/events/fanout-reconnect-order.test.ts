import { SharedFanout, encodeNotification, type ChangesSince } from '../../../src/events/event-fanout';
import type { EventTransport, TransportListener } from '../../../src/events/event-transport';
import { OrderStatusBus, type OrderStatusChange } from '../../../src/events/order-status-bus';

// The ordering rules of the fan-out after a lost connection, with the transport's calls made in
// exactly the interleavings a real connection can produce (the real LISTEN and Redis transports
// are exercised in test/integration/events).

const change = (sequence: number): OrderStatusChange => ({
  eventId: `e-${sequence}`,
  environmentId: 1,
  reference: 'ORD-1',
  statusId: sequence === 1 ? 1 : 5,
  status: sequence === 1 ? 'Pending' : 'Successful',
  sequence,
});

/** A transport whose connection events the test drives by hand. */
class HandDrivenTransport implements EventTransport {
  readonly announcedByDatabase = true;
  listening = false;
  listener!: TransportListener;
  async publish(): Promise<void> {}
  async start(listener: TransportListener): Promise<void> {
    this.listener = listener;
    this.listening = true;
  }
  async stop(): Promise<void> {}
  heard(c: OrderStatusChange): void {
    this.listener.receive(encodeNotification({ kind: 'order', change: c, delivery: false }));
  }
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

async function setUp(readBacks: Array<Promise<OrderStatusChange[]>>) {
  const bus = new OrderStatusBus();
  const transport = new HandDrivenTransport();
  const asked: Date[] = [];
  const changesSince: ChangesSince = (since) => {
    asked.push(since);
    return readBacks[asked.length - 1] ?? Promise.resolve([]);
  };
  const fanout = new SharedFanout('postgres', transport, bus, () => {}, changesSince);
  await fanout.start();
  const seen: number[] = [];
  const iterator = bus.subscribe(1);
  const pump = (async () => {
    for await (const c of iterator) seen.push(c.sequence);
  })();
  const stop = async () => {
    await iterator.return?.();
    await pump;
  };
  return { transport, seen, asked, stop };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('event fan-out after a lost connection', () => {
  it('holds a notification heard before the transport says it listens again until the missed ones are read back', async () => {
    const { transport, seen, stop } = await setUp([Promise.resolve([change(1)])]);
    transport.listener.lost();
    // The new connection's first notification comes in the same packet as LISTEN's answer.
    transport.heard(change(2));
    await transport.listener.listening();
    await settled();
    expect(seen).toEqual([1, 2]);
    await stop();
  });

  it('reads back one gap at a time and publishes what was heard meanwhile after the last read-back', async () => {
    const first = deferred<OrderStatusChange[]>();
    const second = deferred<OrderStatusChange[]>();
    const { transport, seen, asked, stop } = await setUp([first.promise, second.promise]);
    transport.listener.lost();
    const backOnce = transport.listener.listening();
    // Lost again and back again while the first read-back is still running (Redis calls
    // `listening` without waiting for the previous one).
    transport.listener.lost();
    const backTwice = transport.listener.listening();
    transport.heard(change(3));
    await settled();
    expect(asked).toHaveLength(1); // the second read-back waits for the first
    first.resolve([change(1)]);
    await backOnce;
    await settled();
    expect(seen).toEqual([1]); // 3 still held: the second gap is not read back yet
    second.resolve([change(1), change(2)]);
    await backTwice;
    await settled();
    expect(seen).toEqual([1, 2, 3]);
    await stop();
  });

  it('publishes live notifications at once when no read-back is running', async () => {
    const { transport, seen, stop } = await setUp([]);
    transport.heard(change(1));
    transport.heard(change(2));
    await settled();
    expect(seen).toEqual([1, 2]);
    await stop();
  });
});
