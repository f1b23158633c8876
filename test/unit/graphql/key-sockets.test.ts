import { KeySockets, type KeyStanding } from '../../../src/graphql/key-sockets';
import { decodeNotification, encodeNotification } from '../../../src/events/event-notification';
import { waitFor } from '../../integration/events/helpers';

describe('KeySockets', () => {
  const silent = { error: () => undefined };
  /** Sockets whose keys `stillWorks` checks, on the real clock, logging nothing. */
  const checkedBy = (stillWorks: (key: string) => Promise<KeyStanding>, checkTimeoutMs?: number) =>
    new KeySockets(stillWorks, () => new Date(), silent, checkTimeoutMs);

  it('closes, with 4403, only the sockets of the environment whose key no longer works', async () => {
    const revoked = new Set(['old-key']);
    const checked: string[] = [];
    const sockets = checkedBy(async (key) => {
      checked.push(key);
      return !revoked.has(key) && { expiresAt: null };
    });
    const closed: string[] = [];
    sockets.add(1, 'old-key', (code) => closed.push(`a:${code}`));
    sockets.add(1, 'new-key', (code) => closed.push(`b:${code}`));
    sockets.add(2, 'old-key', (code) => closed.push(`c:${code}`)); // another environment: not announced
    sockets.keysExpire(1, new Date(Date.now() - 1));
    // Both sockets of environment 1 checked, and the check's closing done: nothing more follows.
    await waitFor(() => checked.length === 2 && closed.length === 1, 5000, 'the check of environment 1');
    expect(checked.sort()).toEqual(['new-key', 'old-key']);
    expect(closed).toEqual(['a:4403']);
  });

  it('waits for the end of the grace period, and forgets sockets that closed', async () => {
    // The key works until the end of the grace period, as a replaced key does: a check made
    // before that instant would find it working and leave the socket open for good.
    let expiresAt = Infinity;
    let checks = 0;
    const sockets = checkedBy(async () => {
      checks += 1;
      return Date.now() < expiresAt && { expiresAt: null };
    });
    const closed: number[] = [];
    sockets.add(1, 'key', (code) => closed.push(code));
    const untrack = sockets.add(1, 'key', () => closed.push(-1));
    untrack();
    expect(sockets.count(1)).toBe(1);
    expiresAt = Date.now() + 100;
    sockets.keysExpire(1, new Date(expiresAt));
    expect(checks).toBe(0);
    await waitFor(() => closed.length > 0, 5000, 'the socket closed at the end of the grace period');
    expect(checks).toBe(1);
    expect(closed).toEqual([4403]);
    sockets.stop();
  });

  it('closes a socket when the key it opened with reaches its known end, without any announcement', async () => {
    const endsAt = Date.now() + 100;
    let checks = 0;
    const sockets = checkedBy(async () => {
      checks += 1;
      return Date.now() < endsAt && { expiresAt: endsAt };
    });
    const closed: number[] = [];
    // Two sockets of one key in its grace period: one check at its end, for both.
    sockets.add(1, 'replaced-key', (code) => closed.push(code), endsAt);
    sockets.add(1, 'replaced-key', (code) => closed.push(code), endsAt);
    await waitFor(() => closed.length === 2, 5000, 'the sockets closed at the end of the grace period');
    expect(closed).toEqual([4403, 4403]);
    expect(checks).toBe(1);
    sockets.stop();
  });

  it('a check that finds a key working only until a later instant checks it again then (a rotation this instance did not hear)', async () => {
    let endsAt: number | null = null;
    const sockets = checkedBy(async () => (endsAt === null || Date.now() < endsAt) && { expiresAt: endsAt });
    const closed: number[] = [];
    sockets.add(1, 'key', (code) => closed.push(code));
    // Replaced with a grace period while the announcement went unheard; the reconnection's check finds it still working.
    endsAt = Date.now() + 100;
    await sockets.checkAll();
    expect(closed).toEqual([]);
    await waitFor(() => closed.length === 1, 5000, 'the socket closed at the end of the grace period');
    expect(closed).toEqual([4403]);
    sockets.stop();
  });

  it("checks, at a key's or session's known end, only the sockets opened with it", async () => {
    const checked: string[] = [];
    const sockets = checkedBy(async (key) => {
      checked.push(key);
      if (key === 'session-a') return false; // its session is over
      throw new Error('connection terminated'); // a check of anything else would fail now
    });
    const closed: Array<[string, number]> = [];
    sockets.add(1, 'session-a', (code) => closed.push(['session-a', code]), Date.now() + 100);
    sockets.add(1, 'private-key-b', (code) => closed.push(['private-key-b', code]));
    await waitFor(() => closed.length > 0, 5000, 'the session socket closed at its end');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(checked).toEqual(['session-a']);
    expect(closed).toEqual([['session-a', 4403]]);
    sockets.stop();
  });

  it("forgets a key's end when its last socket closes (no timer left behind)", () => {
    const sockets = checkedBy(async () => ({ expiresAt: null }));
    const keep = sockets.add(1, 'session-kept', () => undefined, Date.now() + 3_600_000);
    for (let i = 0; i < 1000; i += 1) sockets.add(1, `session-${i}`, () => undefined, Date.now() + 3_600_000 + i)();
    const timers = (sockets as unknown as { keyEnds: Map<string, unknown> }).keyEnds;
    expect([...timers.keys()]).toEqual(['session-kept']);
    keep();
    expect(timers.size).toBe(0);
  });

  it('closes, with 1013 so the client reconnects, a socket whose key check fails or does not answer in time', async () => {
    const sockets = checkedBy(
      (key) =>
        key === 'broken'
          ? Promise.reject(new Error('connection refused'))
          : key === 'hanging'
            ? new Promise<KeyStanding>(() => undefined)
            : Promise.resolve({ expiresAt: null }),
      20,
    );
    const closed: string[] = [];
    sockets.add(1, 'broken', (code) => closed.push(`broken:${code}`));
    sockets.add(1, 'hanging', (code) => closed.push(`hanging:${code}`));
    sockets.add(1, 'fine', (code) => closed.push(`fine:${code}`));
    await sockets.checkAll();
    expect(closed.sort()).toEqual(['broken:1013', 'hanging:1013']);
  });

  it('checks each key once however many sockets share it, a few keys at a time, each within its own time limit', async () => {
    let running = 0;
    let most = 0;
    const checked: string[] = [];
    // Each check takes 25 ms against a limit of 500 ms: 96 keys queued 4 at a time take about
    // 600 ms in all, so a limit counted from the queue (not from each check's start) would fail some.
    const sockets = checkedBy(async (key) => {
      checked.push(key);
      running += 1;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 25));
      running -= 1;
      return { expiresAt: null };
    }, 500);
    const closed: number[] = [];
    for (let k = 0; k < 96; k += 1) for (let i = 0; i < 5; i += 1) sockets.add(1 + (k % 3), `key-${k}`, (code) => closed.push(code));
    await sockets.checkAll();
    expect(checked.sort()).toEqual(Array.from({ length: 96 }, (_, k) => `key-${k}`).sort());
    expect(most).toBe(4);
    expect(closed).toEqual([]);
  });

  it('a key expiry round-trips through the event notification payload', () => {
    const expiry = { environmentId: 7, expiresAt: new Date('2030-01-02T03:04:05.678Z') };
    expect(decodeNotification(encodeNotification({ kind: 'keys', expiry }))).toEqual({ kind: 'keys', expiry });
    expect(decodeNotification(JSON.stringify({ k: 'keys', e: 7, at: 'not a date' }))).toBeNull();
  });
});
