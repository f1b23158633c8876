import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** Hop-by-hop headers of an upgrade that a plain HTTP/1.1 request must not carry. */
const UPGRADE_HEADERS = new Set(['upgrade', 'http2-settings']);

/** Only a GET on `path` asking for `Upgrade: websocket` becomes a WebSocket. */
export function isWebSocketUpgradeRequest(req: IncomingMessage, path: string): boolean {
  if (req.method !== 'GET') return false;
  const url = req.url ?? '';
  const q = url.indexOf('?');
  if ((q === -1 ? url : url.slice(0, q)) !== path) return false;
  const upgrade = req.headers.upgrade;
  return typeof upgrade === 'string' && upgrade.split(',').some((p) => p.trim().toLowerCase() === 'websocket');
}

/**
 * Node's HTTP server hands every request with `Connection: Upgrade` to the 'upgrade' listeners
 * as soon as one exists (the WebSocket plugin's), body unread. Java's default HTTP client asks
 * for `Upgrade: h2c` on every request, `curl --http2` too; such requests must be answered as the
 * ordinary HTTP/1.1 requests they also are. So the existing 'upgrade' listeners keep only true
 * WebSocket upgrades of `webSocketPath`; any other upgrade request is written back, without its
 * upgrade headers, in front of the unread bytes and the socket is handed to the HTTP server as a
 * fresh connection: it is parsed as a plain request, body and keep-alive included.
 */
export function answerOtherUpgradesAsHttp(server: Server, webSocketPath: string): void {
  const webSocketListeners = server.listeners('upgrade') as ((req: IncomingMessage, socket: Duplex, head: Buffer) => void)[];
  if (webSocketListeners.length === 0) return;
  server.removeAllListeners('upgrade');
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (isWebSocketUpgradeRequest(req, webSocketPath)) {
      for (const listener of webSocketListeners) listener.call(server, req, socket, head);
      return;
    }
    socket.unshift(Buffer.concat([requestHeadWithoutUpgrade(req), head]));
    server.emit('connection', socket);
  });
}

/** The request line and headers as received, less the upgrade headers and their Connection tokens. */
export function requestHeadWithoutUpgrade(req: IncomingMessage): Buffer {
  const lines = [`${req.method} ${req.url} HTTP/${req.httpVersion === '1.0' ? '1.0' : '1.1'}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    const lower = name.toLowerCase();
    if (UPGRADE_HEADERS.has(lower)) continue;
    if (lower === 'connection') {
      const kept = raw[i + 1]
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '' && !UPGRADE_HEADERS.has(t.toLowerCase()));
      if (kept.length > 0) lines.push(`${name}: ${kept.join(', ')}`);
      continue;
    }
    lines.push(`${name}: ${raw[i + 1]}`);
  }
  // Header bytes arrive as latin1 strings; written back the same way they are the bytes received.
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}
