import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { Client as PgClient } from 'pg';
import { Redis } from 'ioredis';

/**
 * The baseline of the events bench's subscriber phase, in a process of its own as a service
 * instance is: a bare `ws` server that hears the same commit notifications as the service (the
 * PostgreSQL channel, or the Redis channel when given one) and sends every connected socket the
 * message a graphql-ws subscriber of `orderStatusChanged` receives for that change, serialised
 * once. No protocol handshake, no authentication, no GraphQL execution, no per-socket
 * serialisation: what is left is hearing the commit and writing to a thousand sockets.
 *
 * Started with fork(); sends `{ port }` once listening; stops when its parent goes.
 */
interface Options {
  databaseUrl: string;
  channel: string;
  redisUrl?: string;
}

const options = JSON.parse(process.argv[2] ?? '{}') as Options;
const sockets = new Set<WebSocket>();

function broadcast(payload: string | undefined): void {
  let change: { reference?: string; status?: string; sequence?: number; eventId?: string } | undefined;
  try {
    const n = JSON.parse(payload ?? '') as { k?: string; c?: typeof change };
    if (n.k === 'order') change = n.c;
  } catch {
    return;
  }
  if (!change?.reference) return;
  const message = JSON.stringify({
    id: '1',
    type: 'next',
    payload: { data: { orderStatusChanged: { reference: change.reference, status: change.status, sequence: change.sequence, eventId: change.eventId } } },
  });
  for (const socket of sockets) socket.send(message);
}

async function main(): Promise<void> {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0, backlog: 1024 });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  if (options.redisUrl) {
    const redis = new Redis(options.redisUrl);
    redis.on('message', (_channel: string, message: string) => broadcast(message));
    await redis.subscribe(options.channel);
  } else {
    const client = new PgClient({ connectionString: options.databaseUrl });
    await client.connect();
    client.on('notification', (msg) => broadcast(msg.payload));
    await client.query(`listen "${options.channel}"`);
  }
  process.send!({ port: (server.address() as AddressInfo).port });
}

main().catch((err: unknown) => {
  process.stderr.write(`ws baseline: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
process.on('disconnect', () => process.exit(0));
