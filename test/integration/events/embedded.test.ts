import 'reflect-metadata';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../../src/config';
import { createService, type Service } from '../../../src/bootstrap';
import type { OrderStatusChange } from '../../../src/events/order-status-bus';
import { TEST_MASTER_KEY } from '../../support/database';
import { EVENTS_ENV, freePort, payOrder, startReceiver, verifiesIndependently, waitFor, type Receiver } from './helpers';

/**
 * The embedded database (PGlite behind a socket): NOTIFY does not leave it, so changes are
 * published in process after commit, once; webhooks are claimed and delivered the same way.
 */
describe('events on the embedded database', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pgw-events-embedded-'));
  let service: Service;
  let baseUrl: string;
  let r: Receiver;
  beforeAll(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const config = loadConfig({
      ...EVENTS_ENV,
      DATA_DIR: dataDir,
      MASTER_KEY: TEST_MASTER_KEY,
      LOG_LEVEL: 'silent',
      PORT: String(port),
      PUBLIC_URL: baseUrl,
      SCHEDULER_INTERVAL_MS: '0',
    });
    service = await createService(config, { logger: false });
    await service.app.listen({ port, host: '127.0.0.1' });
    r = await startReceiver((_req, i) => (i === 0 ? { status: 502 } : { status: 200 }));
  }, 60_000);
  afterAll(async () => {
    await service?.close();
    await r?.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('publishes each change once after commit and delivers the signed webhook, retrying as on a server', async () => {
    const services = service.runtime.ctx.services;
    expect(service.runtime.db.mode).toBe('embedded');
    expect(services.eventFanout.mode).toBe('in-process');
    const m = await services.merchants.createMerchant({ name: 'Embedded Events', country: 'NG', supportEmail: 'e@events.test', webhookUrl: r.url });
    const tenant = await services.auth.authenticate(m.keys.test.privateKey);
    const seen: OrderStatusChange[] = [];
    const iterator = services.orderStatusBus.subscribe(tenant.environmentId)[Symbol.asyncIterator]();
    const pump = (async () => {
      for (let next = await iterator.next(); !next.done; next = await iterator.next()) seen.push(next.value);
    })();

    const reference = await payOrder(baseUrl, m.keys.test);
    const [first, second] = await r.waitForCount(2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(verifiesIndependently(m.webhookSecret, second!.headers, second!.body)).toBe(true);
    expect(second!.json).toMatchObject({ notify: 'transaction', notifyType: 'successful', sequence: 2, data: { orderReference: reference, statusId: 5 } });
    const [delivery] = await waitFor(
      async () => {
        const list = await services.webhooks.listDeliveries(tenant, { orderReference: reference });
        return list[0]?.state === 'delivered' ? list : null;
      },
      5000,
      'delivered state',
    );
    expect(delivery!.attempts.map((a) => a.statusCode)).toEqual([502, 200]);

    // A later order's settlement goes through the same path: once it has arrived, a second
    // publication of the first order's changes would have arrived before it.
    const later = await payOrder(baseUrl, m.keys.test);
    await waitFor(() => seen.some((c) => c.reference === later && c.sequence === 2), 10_000, "the later order's settlement");
    await iterator.return?.();
    await pump;
    expect(seen.filter((c) => c.reference !== later).map((c) => [c.reference, c.sequence, c.status])).toEqual([
      [reference, 1, 'pending authentication'],
      [reference, 2, 'Successful'],
    ]);
  }, 30_000);
});
