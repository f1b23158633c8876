import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * How long, and how many bytes, a connection answered before its body arrived is still read from.
 * The HTTP parser reads the socket natively, so the bytes are checked on a timer: over loopback a
 * client can send tens of megabytes in 50 ms, hence a short period (the timer runs only while a
 * connection drains, at most `ms`).
 */
export const DRAIN_LIMITS = { ms: 5_000, bytes: 16 * 1024 * 1024, checkEveryMs: 10 } as const;

const draining = new WeakSet<Socket>();

/**
 * Closes the way RFC 9112 (section 9.6) asks when the service answers before the request body
 * has arrived and closes the connection after (a body over the limit gets its 413 as soon as
 * its Content-Length is read). Closing the socket outright while the client is still sending
 * makes the client's next write fail (EPIPE), and the reset its data then draws can discard the
 * answer before the client reads it: Node's HTTP client reports the error, never the 413.
 *
 * So the answer is sent, the connection half-closed (no more is written) and the rest of the
 * request is still read and discarded, until the client ends its side, or for at most
 * DRAIN_LIMITS.ms and DRAIN_LIMITS.bytes; then the socket is closed. A client that keeps
 * sending holds the socket no longer than that.
 */
export function installBodyDrain(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const raw = request.raw;
    if (raw.complete || (raw as { upgrade?: boolean }).upgrade) return payload;
    const connection = reply.getHeader('connection');
    if (reply.statusCode === 413 || (typeof connection === 'string' && connection.toLowerCase() === 'close')) {
      reply.header('connection', 'close');
      drainBeforeClosing(raw.socket);
    }
    return payload;
  });
}

/**
 * Replaces the socket's close-after-answer with a half-close and a bounded drain. Node's HTTP
 * server calls `destroySoon()` once the last answer on a `Connection: close` connection is
 * written; the HTTP parser goes on reading (and discarding) the body meanwhile.
 */
export function drainBeforeClosing(socket: Socket): void {
  if (draining.has(socket)) return;
  draining.add(socket);
  const closeNow = socket.destroySoon.bind(socket);
  socket.destroySoon = () => {
    if (socket.destroyed) return;
    const startedAt = Date.now();
    const readAtStart = socket.bytesRead;
    const finish = () => {
      clearInterval(watch);
      if (!socket.destroyed) socket.destroy();
    };
    // The end of the client's side (it sent everything, or gave up) or the socket's close ends the drain.
    socket.once('end', finish);
    socket.once('close', () => clearInterval(watch));
    const watch = setInterval(() => {
      if (Date.now() - startedAt >= DRAIN_LIMITS.ms || socket.bytesRead - readAtStart > DRAIN_LIMITS.bytes) finish();
    }, DRAIN_LIMITS.checkEveryMs);
    watch.unref();
    // Everything written so far goes out, then FIN: the client reads the whole answer and knows no more comes.
    if (socket.writable) socket.end();
    else closeNow();
  };
}
