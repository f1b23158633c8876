import 'reflect-metadata';
import { PostgresFanout } from '../../../src/events/event-fanout';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { changeUnheard, expectForbiddenClosedBeforeMissedEvents, openSocketsOnB } from '../../support/outage-sockets';
import { createScratchDatabase } from './helpers';

/**
 * Two instances on one database of this file's own. While instance B's LISTEN connection is
 * down, a member is removed and a private key is rotated (no grace period) on instance A and an
 * order is paid: B hears none of it. When B listens again it must check every open socket's key (and dashboard session)
 * before it publishes the events it missed.
 */
describe('GraphQL WebSockets after a LISTEN outage', () => {
  let drop: () => Promise<void> = async () => undefined;
  let a: TestService;
  let b: TestService;

  beforeAll(async () => {
    const scratch = await createScratchDatabase('listen_outage_sockets');
    drop = scratch.drop;
    a = await startTestService({ DATABASE_URL: scratch.url, WEBHOOK_CONCURRENCY: '0' });
    b = await startTestService({ DATABASE_URL: scratch.url, WEBHOOK_CONCURRENCY: '0' });
  }, 120_000);

  afterAll(async () => {
    await b?.close();
    await a?.close();
    await drop();
  }, 30_000);

  it('closes (4403) the sockets of a key rotated unheard and of a member removed unheard, before publishing what was missed; the others get every event', async () => {
    const m = await createTestMerchant(a);
    const fanout = b.service.runtime.ctx.services.eventFanout as PostgresFanout;
    expect(fanout).toBeInstanceOf(PostgresFanout);

    // On B: a socket with the private key, one of a member's dashboard session, one with the public key.
    const sockets = await openSocketsOnB(a, b, m, 'leaving@outage.example');
    // B's LISTEN connection stays down while A rotates the private key and an order is paid.
    const sql = (q: string, p: unknown[] = []) => a.service.runtime.ctx.orm.em.getConnection().execute(q, p);
    const during = await changeUnheard(a, m, sockets.member, {
      connection: "B's LISTEN connection",
      cut: () => sql('select pg_terminate_backend(pid) from pg_stat_activity where application_name = ?', [fanout.applicationName]),
      hearing: () => fanout.listening,
    });

    // The missed events are published on B, to the public key's socket only: the other two are closed first.
    await expectForbiddenClosedBeforeMissedEvents(sockets, during);
    sockets.publicSocket.close();
  }, 60_000);
});
