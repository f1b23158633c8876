import type { CreatedMerchant } from '../../src/merchants/merchant.service';
import type { TestService } from './service';
import { request } from './http';
import { addMember, signInMember, type TestMember } from './members';
import { closedWithin, WsSession } from '../integration/graphql/ws-session';
import { payOrder, sleep, waitFor } from '../integration/events/helpers';

/**
 * What the tests of an outage of the events' connection (LISTEN or Redis) share: two instances,
 * A and B, on one database; sockets on B; while B hears nothing, a member removed and a private
 * key rotated on A and an order paid; when B hears again it must close the sockets those changes
 * forbid before it publishes what it missed.
 */

const STATUS = 'subscription { orderStatusChanged { reference statusId status } }';

export interface OutageSockets {
  member: TestMember;
  /** With the private key, which is rotated during the outage. */
  privateSocket: WsSession;
  /** Of the member's dashboard session; the member is removed during the outage. */
  sessionSocket: WsSession;
  /** With the public key, which stays valid. */
  publicSocket: WsSession;
}

/** The status changes of one order a socket got. */
export function statusEvents(s: WsSession, reference: string) {
  return s.messages.filter((msg) => msg.type === 'next' && msg.payload?.data?.orderStatusChanged?.reference === reference);
}

/**
 * On B: a socket with the private key, one of a member's dashboard session (the member, added on
 * A, with `memberEmail`), one with the public key, each subscribed to every order's status;
 * resolves once an order paid on A reached all three.
 */
export async function openSocketsOnB(a: TestService, b: TestService, m: CreatedMerchant, memberEmail: string): Promise<OutageSockets> {
  const member = await addMember(a.baseUrl, m.keys.test.privateKey, memberEmail, 'SUPPORT');
  const privateSocket = await WsSession.open(b.baseUrl, { 'api-key': m.keys.test.privateKey });
  const signedIn = await signInMember(b.baseUrl, member);
  const sessionSocket = await WsSession.open(
    b.baseUrl,
    { 'csrf-token': signedIn.body.csrfToken, environment: 'test' },
    { cookie: signedIn.cookie, origin: b.baseUrl },
  );
  const publicSocket = await WsSession.open(b.baseUrl, { 'api-key': m.keys.test.publicKey });
  const sockets = [privateSocket, sessionSocket, publicSocket];
  for (const s of sockets) s.subscribe('status', STATUS);
  const before = await payOrder(a.baseUrl, m.keys.test);
  for (const s of sockets) await waitFor(() => statusEvents(s, before).length >= 2, 10_000, 'the first order on every socket');
  return { member, privateSocket, sessionSocket, publicSocket };
}

/**
 * Keeps B's connection down (`outage.cut`, again every 10 ms) while, on A, the member is removed,
 * the private key rotated with no grace period and an order paid; then waits until B hears again.
 * Resolves the reference of the order paid during the outage.
 */
export async function changeUnheard(
  a: TestService,
  m: CreatedMerchant,
  member: TestMember,
  outage: { cut: () => Promise<unknown>; hearing: () => boolean; connection: string },
): Promise<string> {
  let killing = true;
  const killer = (async () => {
    while (killing) {
      await outage.cut();
      await sleep(10);
    }
  })();
  let during: string;
  try {
    await waitFor(() => !outage.hearing(), 5_000, `${outage.connection} to drop`);
    const removed = await request(a.baseUrl, 'POST', '/graphql', {
      apiKey: m.keys.test.privateKey,
      body: { query: `mutation { removeMember(email: "${member.email}") }` },
    });
    expect(removed.body.data.removeMember).toBe(true);
    const rotated = await request(a.baseUrl, 'POST', '/graphql', {
      apiKey: m.keys.test.privateKey,
      body: { query: 'mutation { rotateKeys(input: { keys: [PRIVATE], graceSeconds: 0 }) { privateKey } }' },
    });
    expect(rotated.body.errors).toBeUndefined();
    during = await payOrder(a.baseUrl, m.keys.test);
  } finally {
    killing = false;
    await killer;
  }
  await waitFor(() => outage.hearing(), 10_000, `${outage.connection} to return`);
  return during;
}

/**
 * The missed events of the order paid during the outage reach the public key's socket, but the
 * sockets of the rotated key and of the removed member's session were closed (4403) first and got none.
 */
export async function expectForbiddenClosedBeforeMissedEvents(sockets: OutageSockets, during: string): Promise<void> {
  await waitFor(() => statusEvents(sockets.publicSocket, during).length >= 2, 10_000, 'the missed events on the public socket');
  for (const s of [sockets.privateSocket, sockets.sessionSocket]) {
    expect(await closedWithin(s, 5_000)).toEqual({ code: 4403, reason: expect.stringContaining('Forbidden') });
    expect(statusEvents(s, during)).toEqual([]);
  }
  expect(sockets.publicSocket.isOpen).toBe(true);
}
