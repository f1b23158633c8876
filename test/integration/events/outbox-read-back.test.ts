import { randomUUID } from 'node:crypto';
import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { OutboxService } from '../../../src/events/outbox.service';
import { systemClock } from '../../../src/shared/clock';
import type { OutboxPosition } from '../../../src/events/event-fanout';

describe('reading missed order changes back from the outbox', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => {
    await t.close();
  });

  it('pages through every change since an instant once, in commit order, even when several share a timestamp', async () => {
    const orm = t.service.runtime.ctx.orm;
    const m = await createTestMerchant(t, { name: 'Read Back Ltd' });
    const { environmentId } = await t.service.runtime.ctx.services.auth.authenticate(m.keys.test.privateKey);
    const sql = (q: string, p: unknown[]) => orm.em.getConnection().execute(q, p);
    // Far in the future, so no other test's events fall in the window.
    const at = (ms: number) => new Date(Date.UTC(2099, 0, 1) + ms);
    const rows = [
      { ms: 0, reference: 'RB-A', sequence: 1 },
      { ms: 0, reference: 'RB-A', sequence: 2 },
      { ms: 0, reference: 'RB-B', sequence: 1 },
      { ms: 0, reference: 'RB-B', sequence: 2 },
      { ms: 1, reference: 'RB-A', sequence: 3 },
    ].map((r) => ({ ...r, id: randomUUID() }));
    const before = { ms: -20_000, reference: 'RB-OLD', sequence: 1, id: randomUUID() };
    for (const r of [...rows, before]) {
      await sql(
        `insert into outbox_event (id, environment_id, notify, notify_type, sequence, payload, created_at) values (?, ?, 'transaction', 'successful', ?, ?::json, ?)`,
        [r.id, environmentId, r.sequence, JSON.stringify({ data: { orderReference: r.reference, statusId: 5, status: 'Successful' } }), at(r.ms)],
      );
    }
    const outbox = new OutboxService(t.config.publicUrl, systemClock);
    const seen: Array<[string, number]> = [];
    const pages: number[] = [];
    let after: OutboxPosition | null = null;
    do {
      const page = await outbox.changesSince(orm.em.fork(), at(-10_000), after, 2);
      pages.push(page.changes.length);
      seen.push(...page.changes.map((c): [string, number] => [c.reference, c.sequence]));
      after = page.next;
    } while (after);
    expect(pages).toEqual([2, 2, 1]);
    // Same instant: by sequence, then id; the older event (before the instant) is not read.
    const sameInstant = rows.slice(0, 4).sort((a, b) => a.sequence - b.sequence || (a.id < b.id ? -1 : 1));
    expect(seen).toEqual([...sameInstant.map((r): [string, number] => [r.reference, r.sequence]), ['RB-A', 3]]);
  });
});
