import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config';
import { clientIdentity } from './client-address';

const counted = new WeakSet<Socket>();

/**
 * Node server settings that keep a slow or hostile client from holding sockets: headers and
 * body must arrive within REQUEST_TIMEOUT_MS (then 408 and the connection is closed), idle
 * keep-alive connections close after KEEP_ALIVE_TIMEOUT_MS. Node checks for expired requests
 * periodically; the period is a tenth of the timeout so a request never lives much longer.
 */
export function httpServerOptions(config: Config) {
  return {
    requestTimeout: config.requestTimeoutMs,
    headersTimeout: config.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(5000, Math.max(50, Math.floor(config.requestTimeoutMs / 10))),
  };
}

/**
 * Caps open connections: MAX_CONNECTIONS per instance (Node refuses more) and, unless
 * RATE_LIMIT=off, MAX_CONNECTIONS_PER_IP per client address, so one client opening sockets and
 * sending nothing cannot take every slot.
 */
export function capConnections(server: Server, config: Config): void {
  server.maxConnections = config.maxConnections;
  const perIp = config.rateLimit.enabled ? config.maxConnectionsPerIp : 0;
  if (perIp <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    // A socket handed back to the server (a non-WebSocket upgrade answered as HTTP) is counted once.
    if (counted.has(socket)) return;
    const id = clientIdentity(socket.remoteAddress);
    const n = (open.get(id) ?? 0) + 1;
    if (n > perIp) {
      socket.destroy();
      return;
    }
    counted.add(socket);
    open.set(id, n);
    socket.once('close', () => {
      const left = (open.get(id) ?? 1) - 1;
      if (left <= 0) open.delete(id);
      else open.set(id, left);
    });
  });
}
