import 'reflect-metadata';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import WebSocket from 'ws';
import { createClient, type Client as WsClient } from 'graphql-ws';
import type { OrderStatusChange } from '../../../src/events/order-status-bus';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { TEST_MASTER_KEY } from '../../support/database';
import { EVENTS_ENV, createScratchDatabase, freePort, payOrder, startReceiver, verifiesIndependently, waitFor, type Receiver } from './helpers';
import { processMarker } from '../../support/test-processes';

const ROOT = path.resolve(__dirname, '../../..');

/**
 * Several instances of the built service (`node dist/src/main.js`) on one PostgreSQL database
 * of this file's own (so that no other test file's instance takes part): deliveries shared out
 * with SKIP LOCKED, state changes fanned out with LISTEN/NOTIFY, at-least-once delivery across
 * a kill -9.
 */
/** How long a service process may take to answer /health after it is spawned. */
const STARTUP_MS = 60_000;

describe('events across service processes', () => {
  let clusterUrl: string;
  let dropDatabase: () => Promise<void> = async () => undefined;
  let t: TestService; // an in-process instance that delivers nothing: creates merchants, reads the database
  const receivers: Receiver[] = [];
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    // dist/ is built by the run's global setup.
    const scratch = await createScratchDatabase('events_cluster');
    clusterUrl = scratch.url;
    dropDatabase = scratch.drop;
    t = await startTestService({ ...EVENTS_ENV, DATABASE_URL: clusterUrl, WEBHOOK_CONCURRENCY: '0' });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.kill('SIGKILL')));
    await t?.close();
    await Promise.all(receivers.map((r) => r.close()));
    await dropDatabase();
  }, 30_000);

  async function receiver(reply?: Receiver['reply']): Promise<Receiver> {
    const r = await startReceiver(reply);
    receivers.push(r);
    return r;
  }

  async function spawnService(): Promise<ServiceProcess> {
    const port = await freePort();
    const baseUrl = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      ...processMarker(),
      DATABASE_URL: clusterUrl,
      MIGRATE_ON_START: 'false',
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: baseUrl,
      MASTER_KEY: TEST_MASTER_KEY,
      LOG_LEVEL: 'silent',
      DATABASE_POOL_SIZE: '4',
      SCHEDULER_INTERVAL_MS: '0',
      ...EVENTS_ENV,
    };
    const child = spawn(process.execPath, ['dist/src/main.js'], { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const service: ServiceProcess = {
      baseUrl,
      child,
      async kill(signal) {
        if (child.exitCode === null && child.signalCode === null) child.kill(signal);
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 10_000)))]);
        clearTimeout(timer);
      },
    };
    processes.push(service);
    await waitFor(
      async () => {
        if (child.exitCode !== null) throw new Error(`service exited (${child.exitCode}): ${stderr}`);
        return fetch(`${baseUrl}/health`).then(
          (r) => r.ok,
          () => false,
        );
      },
      // A cap, not a pause: a busy machine (CI beside other work) has taken over 20 s to start one.
      STARTUP_MS,
      `${baseUrl}/health`,
    );
    return service;
  }

  const deliveryRows = (eventIds: string[]) =>
    t.service.runtime.ctx.orm.em
      .getConnection()
      .execute(
        `select e.id as event_id, d.state, d.attempt_count, d.locked_until from webhook_delivery d join outbox_event e on e.id = d.event_id where e.id in (${eventIds.map(() => '?').join(',')})`,
        eventIds,
      ) as Promise<Array<{ event_id: string; state: string; attempt_count: number; locked_until: string | null }>>;

  it(
    'shuts down gracefully on SIGTERM: closes its server and database, then exits 0',
    async () => {
      const service = await spawnService();
      expect((await fetch(`${service.baseUrl}/health`)).status).toBe(200);
      await service.kill('SIGTERM');
      expect(service.child.exitCode).toBe(0);
      await expect(fetch(`${service.baseUrl}/health`)).rejects.toThrow();
    },
    STARTUP_MS + 30_000,
  );

  describe('two processes', () => {
    let a: ServiceProcess;
    let b: ServiceProcess;
    beforeAll(async () => {
      [a, b] = await Promise.all([spawnService(), spawnService()]);
    }, STARTUP_MS + 10_000);
    afterAll(async () => {
      await Promise.all([a?.kill('SIGTERM'), b?.kill('SIGTERM')]);
    }, 30_000);

    it('deliver every event exactly once between them, and a change on one reaches subscribers on the other', async () => {
      const r = await receiver(() => ({ status: 200, delayMs: 20 }));
      const m = await createTestMerchant(t, { webhookUrl: r.url });
      const tenant = await t.service.runtime.ctx.services.auth.authenticate(m.keys.test.privateKey);

      // A GraphQL subscriber on B, and a bus subscriber in this process's instance.
      const ws: WsClient = createClient({
        url: `${b.baseUrl.replace('http', 'ws')}/graphql`,
        webSocketImpl: WebSocket,
        connectionParams: { 'api-key': m.keys.test.publicKey },
        retryAttempts: 0,
        lazy: false,
      });
      const onB: Array<{ reference: string; statusId: number; sequence: number }> = [];
      const connected = new Promise<void>((resolve) => ws.on('connected', () => resolve()));
      const unsubscribe = ws.subscribe(
        { query: 'subscription { orderStatusChanged { reference statusId sequence } }' },
        { next: (v) => onB.push((v.data as any).orderStatusChanged), error: () => undefined, complete: () => undefined },
      );
      const onLocal: OrderStatusChange[] = [];
      const iterator = t.service.runtime.ctx.services.orderStatusBus.subscribe(tenant.environmentId)[Symbol.asyncIterator]();
      const pump = (async () => {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) onLocal.push(next.value);
      })();
      await connected;
      // B counts the subscription among its live ones (its own /metrics), and so does this instance.
      await waitFor(
        async () => /^gateway_graphql_subscriptions 1$/m.test(await (await fetch(`${b.baseUrl}/metrics`)).text()),
        10_000,
        'the subscription registered on B',
      );
      await waitFor(() => t.service.runtime.ctx.services.orderStatusBus.subscriberCount(tenant.environmentId) === 1, 10_000, 'the local subscriber');

      try {
        const paidOnA = await Promise.all([0, 1, 2].map(() => payOrder(a.baseUrl, m.keys.test)));
        const paidOnB = await Promise.all([0, 1, 2].map(() => payOrder(b.baseUrl, m.keys.test)));
        const pings = await Promise.all(Array.from({ length: 10 }, () => t.service.runtime.ctx.services.webhooks.sendTestPing(tenant)));

        const expected = 6 + pings.length;
        await r.waitForCount(expected, 15_000);
        await waitFor(() => onB.length >= 12 && onLocal.length >= 12, 10_000, 'subscribers to see 12 changes');
        // A later order paid on A, seen on B and here: a repeated publication of the earlier
        // changes would have come before it. (Repeated deliveries show in the attempt counts below.)
        const later = await payOrder(a.baseUrl, m.keys.test);
        const settled = (seen: Array<{ reference: string; sequence: number }>) => seen.some((c) => c.reference === later && c.sequence === 2);
        await waitFor(() => settled(onB) && settled(onLocal), 10_000, "the later order's settlement on both");
        await r.waitForCount(expected + 1, 15_000);
        for (const seen of [onB, onLocal] as Array<Array<{ reference: string }>>) seen.splice(0, seen.length, ...seen.filter((c) => c.reference !== later));
        const received = r.received.filter((h) => h.json?.data?.orderReference !== later);

        const ids = received.map((h) => String(h.headers['webhook-id']));
        expect(ids).toHaveLength(expected);
        expect(new Set(ids).size).toBe(expected);
        for (const hook of received) expect(verifiesIndependently(m.webhookSecret, hook.headers, hook.body)).toBe(true);
        expect(new Set(received.filter((h) => h.json.notify === 'transaction').map((h) => h.json.data.orderReference))).toEqual(
          new Set([...paidOnA, ...paidOnB]),
        );
        // Each attempt is recorded after its answer: wait until none is left in flight.
        const rows = await waitFor(
          async () => {
            const found = await deliveryRows(ids);
            return found.every((row) => row.state !== 'pending') ? found : null;
          },
          10_000,
          'every delivery recorded',
        );
        expect(rows).toHaveLength(expected);
        expect(rows.every((row) => row.state === 'delivered' && row.attempt_count === 1)).toBe(true);

        // Paid through A, seen on B (and here): each change once, in sequence.
        for (const reference of paidOnA) {
          expect(onB.filter((c) => c.reference === reference).map((c) => [c.sequence, c.statusId])).toEqual([
            [1, 2],
            [2, 5],
          ]);
          expect(onLocal.filter((c) => c.reference === reference).map((c) => [c.sequence, c.statusId])).toEqual([
            [1, 2],
            [2, 5],
          ]);
        }
        for (const reference of paidOnB) {
          expect(onB.filter((c) => c.reference === reference).map((c) => c.sequence)).toEqual([1, 2]);
        }
        expect(onB).toHaveLength(12);
        expect(onLocal).toHaveLength(12);
      } finally {
        unsubscribe();
        await ws.dispose();
        await iterator.return?.();
        await pump;
      }
    }, 40_000);
  });

  it('a process with another MASTER_KEY refuses to start: a clear message, status 78, never healthy', async () => {
    // The in-process instance stored the check value under the test key.
    const port = await freePort();
    const child = spawn(process.execPath, ['dist/src/main.js'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        ...processMarker(),
        DATABASE_URL: clusterUrl,
        MIGRATE_ON_START: 'false',
        HOST: '127.0.0.1',
        PORT: String(port),
        MASTER_KEY: 'cd'.repeat(32),
        LOG_LEVEL: 'silent',
        SCHEDULER_INTERVAL_MS: '0',
        WEBHOOK_CONCURRENCY: '0',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
    expect(code).toBe(78);
    expect(stderr).toMatch(/^MASTER_KEY does not match this database: the check value stored at its first start does not open with it\. /);
    expect(stderr).not.toContain('    at '); // a message, not a stack trace
    expect(stderr).not.toContain('cd'.repeat(32));
    await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
  }, 30_000);

  it(
    'delivers after a kill -9 of the process that committed the event and held the delivery',
    async () => {
      // The first request is never answered: the process dies holding it.
      const r = await receiver((_req, i) => (i === 0 ? 'hang' : { status: 200 }));
      const m = await createTestMerchant(t, { webhookUrl: r.url });
      const tenant = await t.service.runtime.ctx.services.auth.authenticate(m.keys.test.privateKey);
      const first = await spawnService();
      const reference = await payOrder(first.baseUrl, m.keys.test);
      const [hanging] = await r.waitForCount(1, 5000);
      await first.kill('SIGKILL');
      expect(first.child.signalCode).toBe('SIGKILL');

      const eventId = String(hanging!.headers['webhook-id']);
      const [before] = await deliveryRows([eventId]);
      expect(before).toMatchObject({ state: 'pending', attempt_count: 0 });
      expect(before!.locked_until).not.toBeNull();

      // A new process takes the delivery over once the dead one's lease has run out.
      const second = await spawnService();
      const hooks = await r.waitForCount(2, 20_000);
      expect(hooks[1]!.headers['webhook-id']).toBe(eventId);
      expect(hooks[1]!.body).toBe(hooks[0]!.body);
      expect(verifiesIndependently(m.webhookSecret, hooks[1]!.headers, hooks[1]!.body)).toBe(true);
      expect(hooks[1]!.json).toMatchObject({ notify: 'transaction', notifyType: 'successful', data: { orderReference: reference, statusId: 5 } });
      const [after] = await waitFor(
        async () => {
          const rows = await deliveryRows([eventId]);
          return rows[0]?.state === 'delivered' ? rows : null;
        },
        5000,
        'delivered state',
      );
      expect(after).toMatchObject({ attempt_count: 1, locked_until: null });
      const timeline = await t.service.runtime.ctx.services.timeline.list(tenant, reference);
      expect(timeline.map((e) => e.event)).toContain('webhook.delivered');
      await second.kill('SIGTERM');
      expect(second.child.exitCode).toBe(0);
    },
    2 * STARTUP_MS + 20_000,
  );
});

interface ServiceProcess {
  baseUrl: string;
  child: ChildProcess;
  kill(signal: NodeJS.Signals): Promise<void>;
}
