import WebSocket from 'ws';

export interface WsMessage {
  id?: string;
  type: string;
  payload?: any;
}

/**
 * A raw graphql-ws (graphql-transport-ws) client for tests: every message and the close code
 * are visible, so refusals can be asserted exactly.
 */
export class WsSession {
  readonly messages: WsMessage[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private constructor(private readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on('message', (data) => this.messages.push(JSON.parse(String(data)) as WsMessage));
  }

  /** Opens a socket and sends connection_init; resolves after the ack (or the close that refused it). */
  static async open(baseUrl: string, connectionParams: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<WsSession> {
    const ws = new WebSocket(`${baseUrl.replace('http', 'ws')}/graphql`, 'graphql-transport-ws', { headers });
    const session = new WsSession(ws);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ type: 'connection_init', payload: connectionParams }));
    await Promise.race([session.waitFor((m) => m.type === 'connection_ack'), session.closed]);
    return session;
  }

  get isOpen(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  subscribe(id: string, query: string, variables: Record<string, unknown> = {}): void {
    this.ws.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables } }));
  }

  complete(id: string): void {
    this.ws.send(JSON.stringify({ id, type: 'complete' }));
  }

  /** The first message of an operation that is a result or an error. */
  result(id: string, ms = 5000): Promise<WsMessage> {
    return this.waitFor((m) => m.id === id && (m.type === 'next' || m.type === 'error'), ms);
  }

  async waitFor(predicate: (m: WsMessage) => boolean, ms = 5000): Promise<WsMessage> {
    const end = Date.now() + ms;
    for (;;) {
      const found = this.messages.find(predicate);
      if (found) return found;
      // Closed: no message can come any more. Stop polling (a refused `open` races this wait
      // with the close; the loser must not poll on past the test).
      if (this.ws.readyState === WebSocket.CLOSED)
        throw new Error(`the socket closed without such a message; got ${JSON.stringify(this.messages).slice(0, 500)}`);
      if (Date.now() > end) throw new Error(`no such message within ${ms} ms; got ${JSON.stringify(this.messages).slice(0, 500)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  close(): void {
    this.ws.close();
  }
}

/** Resolves with the close, or with null when the socket is still open after `ms`. */
export async function closedWithin(session: WsSession, ms: number): Promise<{ code: number; reason: string } | null> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([session.closed, new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
