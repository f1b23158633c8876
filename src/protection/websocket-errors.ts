import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket, WebSocketServer } from 'ws';

/**
 * A client that sends a malformed WebSocket frame (text that is not UTF-8, a frame above the
 * size limit, an unmasked or unknown frame) is a client fault: `ws` closes the socket with the
 * proper code (1007, 1009, 1002) and then emits 'error', which the GraphQL transport would print
 * with a stack to stderr as if the service had failed. Such errors are logged as one info line
 * instead; every other error goes on as before.
 */
export function quietClientFrameErrors(wss: WebSocketServer, log: FastifyBaseLogger): void {
  wss.on('connection', (socket: WebSocket) => {
    const emit = socket.emit;
    socket.emit = function (this: WebSocket, event: string | symbol, ...args: unknown[]): boolean {
      if (event === 'error' && isClientFrameError(args[0])) {
        log.info({ code: (args[0] as { code: string }).code }, 'WebSocket closed: the client sent an invalid frame');
        return true;
      }
      return emit.call(this, event, ...args);
    } as WebSocket['emit'];
  });
}

/** The errors `ws` raises for frames it refuses all carry a `WS_ERR_…` code. */
export function isClientFrameError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('WS_ERR_');
}
