import { SharedFanout } from '../../../src/events/event-fanout';
import { decodeNotification } from '../../../src/events/event-notification';
import type { EventTransport } from '../../../src/events/event-transport';
import { OrderStatusBus } from '../../../src/events/order-status-bus';

/** A transport whose publishes fail `failures` times, then go through (what it published is kept). */
class FlakyPublisher implements EventTransport {
  readonly announcedByDatabase = false;
  readonly listening = true;
  readonly published: string[] = [];
  attempts = 0;
  constructor(private failures: number) {}
  async publish(payload: string): Promise<void> {
    this.attempts += 1;
    if (this.failures > 0) {
      this.failures -= 1;
      throw new Error('connection reset');
    }
    this.published.push(payload);
  }
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
}

const fanoutOver = (transport: EventTransport) =>
  new SharedFanout(
    'redis',
    transport,
    new OrderStatusBus(),
    () => undefined,
    async () => ({ changes: [], next: null }),
  );

describe('announcing expiring api-keys', () => {
  it('tells this instance at once when the publish fails, and publishes it for the others once the transport takes it', async () => {
    const transport = new FlakyPublisher(2);
    const fanout = fanoutOver(transport);
    const heardHere: number[] = [];
    fanout.onKeysExpiry((expiry) => heardHere.push(expiry.environmentId));
    const expiry = { environmentId: 7, expiresAt: new Date('2030-01-01T00:00:00Z') };
    await fanout.announceKeysExpiry(expiry);
    expect(heardHere).toEqual([7]);
    expect(transport.attempts).toBe(3);
    expect(transport.published.map((p) => decodeNotification(p))).toEqual([{ kind: 'keys', expiry }]);
  });
});

describe('announcing expiring api-keys while the fan-out stops', () => {
  it('stops trying when the fan-out stops (a service shutting down) and says the others were not told', async () => {
    const transport = new FlakyPublisher(Number.POSITIVE_INFINITY);
    const fanout = fanoutOver(transport);
    await fanout.start();
    const announced = fanout.announceKeysExpiry({ environmentId: 7, expiresAt: new Date('2030-01-01T00:00:00Z') });
    await new Promise((resolve) => setTimeout(resolve, 50));
    await fanout.stop();
    expect(await announced).toBe(false);
    expect(transport.attempts).toBe(1);
  });
});
