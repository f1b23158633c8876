import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { createClient, type Client } from 'graphql-ws';
import { Client as PgClient } from 'pg';
import { Redis } from 'ioredis';

/**
 * The receiving end of the events bench, in a process of its own so that its clock readings
 * are not delayed by the process that makes the changes: graphql-ws subscribers and webhook
 * receivers (answering 200 at once). Every arrival is stamped with the machine-wide clock
 * (`performance.timeOrigin + performance.now()`), which the driver process reads too.
 */
export type SinkCommand =
  | { cmd: 'subscribe'; urls: string[]; apiKey: string; count: number }
  /** Plain `ws` sockets to the bare baseline server: each `next` message it sends counts as an arrival. */
  | { cmd: 'subscribe-plain'; urls: string[]; count: number }
  | { cmd: 'unsubscribe' }
  | { cmd: 'receivers'; count: number }
  | { cmd: 'listen'; databaseUrl: string; channel: string }
  | { cmd: 'listen-redis'; redisUrl: string; channel: string }
  | { cmd: 'unlisten' }
  | { cmd: 'counts' }
  | { cmd: 'collect' };

export interface SinkArrivals {
  /** [order reference, arrival time] per message per subscriber. */
  subscriptions: Array<[string, number]>;
  /** [order reference, arrival time, webhook-id (the event id)] per webhook. */
  webhooks: Array<[string, number, string]>;
  /** [order reference, arrival time, event id] per order notification heard on the events channel. */
  notifications: Array<[string, number, string]>;
  /** Subscription errors (each one a subscriber that stopped). */
  errors: string[];
}

const now = () => performance.timeOrigin + performance.now();

let clients: Client[] = [];
let plainSockets: WebSocket[] = [];
const listeners: Array<{ close(): Promise<unknown> }> = [];
let arrivals: SinkArrivals = { subscriptions: [], webhooks: [], notifications: [], errors: [] };
const servers: http.Server[] = [];

async function subscribe(urls: string[], apiKey: string, count: number): Promise<number> {
  const connected: Array<Promise<void>> = [];
  for (let i = 0; i < count; i += 1) {
    const client = createClient({
      url: urls[i % urls.length]!,
      webSocketImpl: WebSocket,
      connectionParams: { 'api-key': apiKey },
      retryAttempts: 0,
      lazy: false,
    });
    connected.push(
      new Promise<void>((resolve, reject) => {
        client.on('connected', () => resolve());
        client.on('closed', (e) => reject(new Error(`subscriber closed before it connected: ${JSON.stringify((e as { code?: number })?.code)}`)));
      }),
    );
    client.subscribe<{ orderStatusChanged: { reference: string } }>(
      { query: 'subscription { orderStatusChanged { reference status sequence eventId } }' },
      {
        next: (v) => {
          const reference = v.data?.orderStatusChanged.reference;
          if (reference) arrivals.subscriptions.push([reference, now()]);
        },
        error: (err) => arrivals.errors.push(JSON.stringify(err).slice(0, 200)),
        complete: () => undefined,
      },
    );
    clients.push(client);
    // Opening a thousand sockets at once would meet the listen backlog: a few at a time.
    if (i % 50 === 49) await Promise.all(connected.slice(-50));
  }
  await Promise.all(connected);
  return clients.length;
}

async function subscribePlain(urls: string[], count: number): Promise<number> {
  const opened: Array<Promise<void>> = [];
  for (let i = 0; i < count; i += 1) {
    const socket = new WebSocket(urls[i % urls.length]!);
    socket.on('message', (data: Buffer) => {
      const at = now();
      try {
        const m = JSON.parse(data.toString('utf8')) as { type?: string; payload?: { data?: { orderStatusChanged?: { reference?: string } } } };
        const reference = m.payload?.data?.orderStatusChanged?.reference;
        if (m.type === 'next' && reference) arrivals.subscriptions.push([reference, at]);
      } catch {
        // not a message of ours
      }
    });
    opened.push(
      new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
      }),
    );
    plainSockets.push(socket);
    if (i % 50 === 49) await Promise.all(opened.slice(-50));
  }
  await Promise.all(opened);
  return plainSockets.length;
}

/** Notes when a commit's notification is handed out (the earliest sign of the commit the sink can see). */
function heard(payload: string | undefined): void {
  const at = now();
  try {
    const n = JSON.parse(payload ?? '') as { k?: string; c?: { reference?: string; eventId?: string } };
    if (n.k === 'order' && n.c?.reference) arrivals.notifications.push([n.c.reference, at, n.c.eventId ?? '']);
  } catch {
    // not an order change
  }
}

async function startReceivers(count: number): Promise<string[]> {
  const urls: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const at = now();
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: { orderReference?: string } };
          if (body.data?.orderReference) arrivals.webhooks.push([body.data.orderReference, at, String(req.headers['webhook-id'] ?? '')]);
        } catch {
          // not a webhook body
        }
      });
    });
    server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    urls.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`);
  }
  return urls;
}

async function handle(command: SinkCommand): Promise<unknown> {
  switch (command.cmd) {
    case 'subscribe':
      return subscribe(command.urls, command.apiKey, command.count);
    case 'subscribe-plain':
      return subscribePlain(command.urls, command.count);
    case 'unsubscribe': {
      const closing = clients;
      clients = [];
      await Promise.all(closing.map((c) => Promise.resolve(c.dispose())));
      const plain = plainSockets;
      plainSockets = [];
      for (const socket of plain) socket.terminate();
      return closing.length + plain.length;
    }
    case 'receivers':
      return startReceivers(command.count);
    case 'listen': {
      // A LISTEN connection of our own: when PostgreSQL hands out a commit's notification.
      const client = new PgClient({ connectionString: command.databaseUrl });
      await client.connect();
      client.on('notification', (msg) => heard(msg.payload));
      await client.query(`listen "${command.channel}"`);
      listeners.push({ close: () => client.end() });
      return true;
    }
    case 'listen-redis': {
      // With REDIS_URL the writer publishes each change to Redis after its commit.
      const redis = new Redis(command.redisUrl);
      redis.on('message', (_channel: string, message: string) => heard(message));
      await redis.subscribe(command.channel);
      listeners.push({ close: () => redis.quit() });
      return true;
    }
    case 'unlisten': {
      await Promise.all(listeners.splice(0).map((l) => l.close().catch(() => undefined)));
      return true;
    }
    case 'counts':
      return { subscriptions: arrivals.subscriptions.length, webhooks: arrivals.webhooks.length, errors: arrivals.errors.length };
    case 'collect': {
      const collected = arrivals;
      arrivals = { subscriptions: [], webhooks: [], notifications: [], errors: [] };
      return collected;
    }
  }
}

process.on('message', (message: { id: number; command: SinkCommand }) => {
  handle(message.command).then(
    (result) => process.send!({ id: message.id, ok: true, result }),
    (err: unknown) => process.send!({ id: message.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
  );
});
process.on('disconnect', () => process.exit(0));
