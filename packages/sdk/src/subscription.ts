/** GraphQL subscriptions over the graphql-ws protocol, each on a WebSocket of its own. */
import { GraphQLRequestError } from './errors';

/** The WebSocket constructor: the global one in browsers and Node 22+, or `ws` in Node 20. */
export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

export interface WebSocketLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export interface SubscriptionHandlers<TData> {
  next(data: TData): void;
  error?(error: unknown): void;
  complete?(): void;
}

export interface Subscription {
  /** Resolves once the server acknowledged the connection and the subscription was sent. */
  readonly ready: Promise<void>;
  unsubscribe(): void;
}

/**
 * Runs one subscription over `socket`, just created, with the graphql-ws protocol
 * (`graphql-transport-ws`); `connection.apiKey`, read when the socket opens, goes in `connectionParams`.
 */
export function openSubscription<TData, TVariables>(
  socket: WebSocketLike,
  connection: { readonly apiKey?: string },
  document: string,
  variables: TVariables,
  handlers: SubscriptionHandlers<TData>,
): Subscription {
  const id = '1';
  let finished = false;
  let resolveReady!: () => void;
  let rejectReady!: (e: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  ready.catch(() => undefined);
  const finish = (error?: unknown) => {
    if (finished) return;
    finished = true;
    if (error !== undefined) {
      rejectReady(error);
      handlers.error?.(error);
    } else {
      handlers.complete?.();
    }
  };
  socket.onopen = () => {
    const payload: Record<string, string> = {};
    if (connection.apiKey) payload['api-key'] = connection.apiKey;
    socket.send(JSON.stringify({ type: 'connection_init', payload }));
  };
  socket.onmessage = (event) => {
    let message: { type?: string; id?: string; payload?: any };
    try {
      message = JSON.parse(String(event.data));
    } catch {
      return;
    }
    switch (message.type) {
      case 'connection_ack':
        socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query: document, variables } }));
        resolveReady();
        break;
      case 'ping':
        socket.send(JSON.stringify({ type: 'pong' }));
        break;
      case 'next':
        if (message.id !== id) break;
        if (message.payload?.errors?.length) {
          const errors = message.payload.errors;
          finish(new GraphQLRequestError(errors[0]?.extensions?.code ?? null, 200, errors, message.payload.data ?? null));
          socket.close(1000);
        } else {
          handlers.next(message.payload.data as TData);
        }
        break;
      case 'error': {
        const errors = Array.isArray(message.payload) ? message.payload : [{ message: 'subscription error' }];
        finish(new GraphQLRequestError(errors[0]?.extensions?.code ?? null, 200, errors, null));
        socket.close(1000);
        break;
      }
      case 'complete':
        finish();
        socket.close(1000);
        break;
    }
  };
  socket.onerror = () => undefined; // onclose follows with the reason
  socket.onclose = (event) => {
    if (!finished) finish(new Error(`The subscription socket closed (${event.code}${event.reason ? ` ${event.reason}` : ''}).`));
  };
  return {
    ready,
    unsubscribe() {
      if (!finished && socket.readyState === 1) socket.send(JSON.stringify({ id, type: 'complete' }));
      finished = true;
      socket.close(1000);
    },
  };
}
