import { encodeNotification } from '../../../src/events/event-notification';
import { SharedFanout, type CatchUpTiming, type ChangesPage, type ChangesSince, type OutboxPosition } from '../../../src/events/event-fanout';
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

const lastPage = (changes: OrderStatusChange[]): ChangesPage => ({ changes, next: null });

/** `readBacks`: what each call of the read-back answers, in turn (a list of changes is a last page). */
async function setUp(readBacks: Array<Promise<OrderStatusChange[] | ChangesPage>>, options: { timing?: CatchUpTiming; check?: () => Promise<void> } = {}) {
  const bus = new OrderStatusBus();
  const transport = new HandDrivenTransport();
  const asked: Array<{ since: Date; after: OutboxPosition | null }> = [];
  const changesSince: ChangesSince = async (since, after) => {
    asked.push({ since, after });
    const answer = await (readBacks[asked.length - 1] ?? Promise.resolve([]));
    return Array.isArray(answer) ? lastPage(answer) : answer;
  };
  const fanout = new SharedFanout('postgres', transport, bus, () => {}, changesSince, options.timing);
  if (options.check) fanout.onReconnected(options.check);
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
  return { transport, seen, asked, stop, fanout };
}

const never = <T>() => new Promise<T>(() => undefined);
/** Short waits, so a database that does not answer is given up on within the test. */
const quick: CatchUpTiming = { checkMs: 20, pageMs: 20, retryPausesMs: [1] };

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

  it('reads a long gap back page after page, from where each page ended', async () => {
    const position = { at: '2026-11-27 01:00:00.123456+00', sequence: 2, id: 'e-2' };
    const { transport, seen, asked, stop } = await setUp([Promise.resolve({ changes: [change(1), change(2)], next: position }), Promise.resolve([change(3)])]);
    transport.listener.lost();
    await transport.listener.listening();
    expect(seen).toEqual([1, 2, 3]);
    expect(asked.map((a) => a.after)).toEqual([null, position]);
    await stop();
  });

  it('keeps holding what was heard when the connection is lost again during a read-back, until that gap is read back', async () => {
    const first = deferred<OrderStatusChange[]>();
    const { transport, seen, stop } = await setUp([first.promise, Promise.resolve([change(2)])]);
    transport.listener.lost();
    const backOnce = transport.listener.listening();
    transport.listener.lost();
    // Heard on the next connection before the transport says it listens again.
    transport.heard(change(3));
    first.resolve([change(1)]);
    await backOnce;
    await settled();
    expect(seen).toEqual([1]);
    await transport.listener.listening();
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

  it('gives up on a reconnection check that does not answer, then reads back and publishes what was heard', async () => {
    const { transport, seen, stop } = await setUp([Promise.resolve([change(1)])], { timing: quick, check: never });
    transport.listener.lost();
    const back = transport.listener.listening();
    transport.heard(change(2));
    await back;
    expect(seen).toEqual([1, 2]);
    await stop();
  });

  it.each([
    ['fails', () => Promise.reject(new Error('connection refused'))],
    ['does not answer in time', () => never<OrderStatusChange[]>()],
  ])('tries a read-back page that %s again, then publishes what was heard meanwhile after it', async (_, firstAnswer) => {
    const { transport, seen, asked, stop } = await setUp([firstAnswer(), Promise.resolve([change(1)])], { timing: quick });
    transport.listener.lost();
    const back = transport.listener.listening();
    transport.heard(change(2));
    await back;
    expect(asked).toHaveLength(2);
    expect(seen).toEqual([1, 2]);
    await stop();
  });

  it('stops a read-back in progress at the stop, and publishes nothing it answers later', async () => {
    const page = deferred<OrderStatusChange[]>();
    const { transport, seen, stop, fanout } = await setUp([page.promise]);
    transport.listener.lost();
    const back = transport.listener.listening();
    transport.heard(change(2));
    await fanout.stop();
    // The read-back stops waiting on the database at the stop (a shutdown is not held up by it).
    await back;
    page.resolve([change(1)]);
    await settled();
    expect(seen).toEqual([]);
    await stop();
  });
});
