import { KeySockets } from '../../../src/graphql/key-sockets';
import { decodeNotification, encodeNotification } from '../../../src/events/event-fanout';

describe('KeySockets', () => {
  const silent = { error: () => undefined };
  const flush = () => new Promise((r) => setTimeout(r, 20));

  it('closes, with 4403, only the sockets of the environment whose key no longer works', async () => {
    const revoked = new Set(['old-key']);
    const sockets = new KeySockets(
      async (key) => !revoked.has(key),
      () => new Date(),
      silent,
    );
    const closed: string[] = [];
    sockets.add(1, 'old-key', (code) => closed.push(`a:${code}`));
    sockets.add(1, 'new-key', (code) => closed.push(`b:${code}`));
    sockets.add(2, 'old-key', (code) => closed.push(`c:${code}`)); // another environment: not announced
    sockets.keysExpire(1, new Date(Date.now() - 1));
    await flush();
    expect(closed).toEqual(['a:4403']);
  });

  it('waits for the end of the grace period, and forgets sockets that closed', async () => {
    let expired = false;
    const sockets = new KeySockets(
      async () => !expired,
      () => new Date(),
      silent,
    );
    const closed: number[] = [];
    sockets.add(1, 'key', (code) => closed.push(code));
    const untrack = sockets.add(1, 'key', () => closed.push(-1));
    untrack();
    expect(sockets.count(1)).toBe(1);
    sockets.keysExpire(1, new Date(Date.now() + 100));
    await flush();
    expect(closed).toEqual([]);
    expired = true;
    await new Promise((r) => setTimeout(r, 250));
    expect(closed).toEqual([4403]);
    sockets.stop();
  });

  it('a key expiry round-trips through the event notification payload', () => {
    const expiry = { environmentId: 7, expiresAt: new Date('2030-01-02T03:04:05.678Z') };
    expect(decodeNotification(encodeNotification({ kind: 'keys', expiry }))).toEqual({ kind: 'keys', expiry });
    expect(decodeNotification(JSON.stringify({ k: 'keys', e: 7, at: 'not a date' }))).toBeNull();
  });
});
