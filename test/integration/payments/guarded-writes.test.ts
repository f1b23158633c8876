import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { countStatements } from '../../support/statement-count';
import { PaymentQueries } from '../../../src/payments/payment.queries';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { Client } from 'pg';
import { waitFor } from '../events/helpers';

/**
 * The money path reads without locks and writes once, guarded by what it read (the row versions
 * of order, payment and link). These tests change a row between that read and the write (by
 * hooking the read, so the interleaving is exact) and check that the guarded write wrote nothing
 * and that the same work then ran under locks and decided on the rows as they are now.
 */
const METRICS_TOKEN = 'guarded-metrics-token-0123456789';

describe('money-path writes guarded by what they read', () => {
  let t: TestService;
  let m: CreatedMerchant;
  const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
  beforeAll(async () => {
    t = await startTestService({ METRICS_TOKEN });
    m = await createTestMerchant(t, { name: 'Guarded Goods', webhookUrl: 'https://hooks.example.test/guarded' });
  });
  afterAll(async () => {
    await t.close();
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });

  const card = { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '39', cvv: '123' };
  let counter = 0;
  const newLink = async (AuthOption: 'AUTH' | 'NOAUTH' = 'NOAUTH') =>
    (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: { Name: `Guarded link ${(counter += 1)}`, Description: 'd', PaymentType: 'MC', AuthOption },
      })
    ).body.data.paymentLink as { id: number };
  const createOrder = async (paymentLinkId: number) => {
    const reference = `GUARD-${Date.now()}-${(counter += 1)}`;
    const created = await postEncrypted(t.baseUrl, '/checkout/order/create', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 1500, reference, description: 'Guarded', currency: 'NGN' },
      payment: { RedirectUrl: 'https://shop.example.test/back', paymentLinkId },
    });
    expect(created.body.statusCode).toBe('01');
    return reference;
  };
  const pay = (reference: string) =>
    postEncrypted(t.baseUrl, '/checkout/order/pay', m.keys.test.publicKey, m.keys.test.encryptionKey, { reference, paymentOption: 'C', country: 'NG', card });

  /**
   * Runs `change` once: right after the attempt's first read made without locks, or right after
   * the attempt was written (before its settlement, which starts from the rows written).
   */
  const changeAfter = (step: 'attempt read' | 'attempt written' | 'resume read', change: () => Promise<unknown>) => {
    const method = step === 'attempt read' ? 'readForAttempt' : step === 'resume read' ? 'readForResume' : 'insertAttempt';
    const original = PaymentQueries.prototype[method] as (...args: unknown[]) => Promise<unknown>;
    let done = false;
    jest.spyOn(PaymentQueries.prototype, method).mockImplementation(async function (this: PaymentQueries, ...args: unknown[]) {
      const answer = await original.apply(this, args);
      if (!done && (step === 'attempt written' ? answer !== null : args[1] === false)) {
        done = true;
        await change();
      }
      return answer;
    } as never);
    return () => done;
  };
  /** The conflicts counted in /metrics so far, by step. */
  const conflicts = async () => {
    const res = await request(t.baseUrl, 'GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const counts: Record<string, number> = {};
    for (const [, step, value] of res.text.matchAll(/^gateway_money_path_guard_conflicts_total\{step="(\w+)"\} (\d+)$/gm)) counts[step!] = Number(value);
    return counts;
  };
  const rowsOf = async (reference: string) => {
    const [order] = await sql('select id, status_id, version from checkout_order where reference = ?', [reference]);
    const payments = await sql('select status_id from order_payment where order_id = ?', [order.id]);
    const timeline = await sql('select event from timeline_event where order_id = ? order by id', [order.id]);
    const events = await sql('select notify_type, sequence from outbox_event where order_id = ? order by sequence', [order.id]);
    const deliveries = await sql('select d.id from webhook_delivery d join outbox_event e on e.id = d.event_id where e.order_id = ?', [order.id]);
    return { order, payments, timeline: timeline.map((r) => r.event as string), events, deliveries: deliveries.length };
  };

  it('writes no attempt when the order changed after its read, even by a write that keeps its version, and pays once under locks', async () => {
    const link = await newLink();
    const reference = await createOrder(link.id);
    const before = (await conflicts()).attempt ?? 0;
    // A write outside the domain (a maintenance script, say): the version stays, the row changed.
    const changed = changeAfter('attempt read', () => sql('update checkout_order set updated_at = updated_at where reference = ?', [reference]));
    let answer: Awaited<ReturnType<typeof pay>> | undefined;
    const count = await countStatements(t.service, async () => {
      answer = await pay(reference);
    });
    expect(changed()).toBe(true);
    expect(answer!.body).toMatchObject({ statusCode: '00', message: 'Order payment successful' });
    // The guarded write, then the locking transaction (BEGIN, locked read, the same write, COMMIT).
    expect(count.statements.filter((s) => /^begin$/i.test(s))).toHaveLength(1);
    expect(count.statements.filter((s) => /^with o as \(\s*select id from checkout_order where id = \$1::int and xmin/.test(s))).toHaveLength(3);
    const rows = await rowsOf(reference);
    expect(rows.payments).toHaveLength(1);
    expect(rows.timeline.filter((e: string) => e === 'payment.initiated')).toHaveLength(1);
    expect(rows.events).toHaveLength(1);
    expect(rows.deliveries).toBe(1);
    // Counted for operators: one conflict, at the attempt.
    expect((await conflicts()).attempt).toBe(before + 1);
  });

  it('refuses an attempt whose link was disabled after its read, and writes nothing', async () => {
    const link = await newLink();
    const reference = await createOrder(link.id);
    const before = (await conflicts()).attempt ?? 0;
    const changed = changeAfter('attempt read', () => sql('update payment_link set is_active = false where id = ?', [link.id]));
    const answer = await pay(reference);
    expect(changed()).toBe(true);
    expect((await conflicts()).attempt).toBe(before + 1);
    expect(answer.body.statusCode).not.toBe('00');
    expect(JSON.stringify(answer.body)).toContain('The payment link is not active.');
    const rows = await rowsOf(reference);
    expect(rows.payments).toHaveLength(0);
    expect(rows.timeline).not.toContain('payment.initiated');
    expect(rows.events).toHaveLength(0);
  });

  it('leaves an attempt settled elsewhere before its settlement is written as it is: no overwrite, no event', async () => {
    const link = await newLink();
    const reference = await createOrder(link.id);
    // Another settlement (a reconciliation, say) declined the attempt before this request's settlement was written.
    const before = (await conflicts()).settlement ?? 0;
    const changed = changeAfter('attempt written', () =>
      sql(
        `update order_payment set status_id = 4, response_code = '51', response_message = 'Insufficient funds'
          where order_id = (select id from checkout_order where reference = ?)`,
        [reference],
      ),
    );
    const answer = await pay(reference);
    expect(changed()).toBe(true);
    expect(answer.body.statusCode).not.toBe('00');
    const rows = await rowsOf(reference);
    expect(rows.payments).toEqual([{ status_id: 4 }]);
    expect(rows.events).toEqual([]);
    expect(rows.deliveries).toBe(0);
    expect((await conflicts()).settlement).toBe(before + 1);
  });

  it('settles under locks when only the order changed after the attempt was written, with one event', async () => {
    const link = await newLink();
    const reference = await createOrder(link.id);
    const before = (await conflicts()).settlement ?? 0;
    const changed = changeAfter('attempt written', () => sql('update checkout_order set updated_at = updated_at where reference = ?', [reference]));
    const answer = await pay(reference);
    expect(changed()).toBe(true);
    expect(answer.body).toMatchObject({ statusCode: '00', message: 'Order payment successful' });
    expect((await conflicts()).settlement).toBe(before + 1);
    const rows = await rowsOf(reference);
    expect(rows.payments).toEqual([{ status_id: 5 }]);
    expect(rows.events).toEqual([{ notify_type: 'successful', sequence: 1 }]);
    expect(rows.deliveries).toBe(1);
  });

  it('records the approval with the link rule it overrode when the link was disabled after the attempt was written', async () => {
    const link = await newLink();
    const reference = await createOrder(link.id);
    const before = (await conflicts()).settlement ?? 0;
    const changed = changeAfter('attempt written', () => sql('update payment_link set is_active = false where id = ?', [link.id]));
    const answer = await pay(reference);
    expect(changed()).toBe(true);
    expect((await conflicts()).settlement).toBe(before + 1);
    // The processor has moved the money: the approval stands, and the disabled link is on the timeline.
    expect(answer.body).toMatchObject({ statusCode: '00' });
    const rows = await rowsOf(reference);
    expect(rows.timeline).toContain('payment.link_rule_overridden');
    expect(rows.events).toHaveLength(1);
  });

  it('does not resume a 3-D Secure attempt that ended after the page read it: no second processor call, no overwrite', async () => {
    const link = await newLink('AUTH');
    const reference = await createOrder(link.id);
    const paid = await pay(reference);
    expect(paid.body.statusCode).toBe('02');
    // The attempt ended between the page's read and its write; only the payment row changed.
    const before = (await conflicts()).resume ?? 0;
    const changed = changeAfter('resume read', () =>
      sql(`update order_payment set status_id = 4 where order_id = (select id from checkout_order where reference = ?)`, [reference]),
    );
    const answer = await fetch(paid.body.data.paymentDetail.redirectUrl as string, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'otp=123456',
    });
    expect(changed()).toBe(true);
    expect(answer.headers.get('location') ?? '').not.toContain('status=successful');
    const rows = await rowsOf(reference);
    expect(rows.payments).toEqual([{ status_id: 4 }]);
    expect(rows.events.map((e) => e.notify_type as string)).toEqual(['pending']);
    expect((await conflicts()).resume).toBe(before + 1);
  });
  it('runs the attempt again under locks when its guarded write was chosen as a deadlock victim, and pays once', async () => {
    const link = await newLink();
    const reference = await createOrder(link.id);
    const before = (await conflicts()).attempt ?? 0;
    // Another transaction holds the link and then wants the order, which the guarded write
    // already locked while it waits for the link: a deadlock. The other side waits 30 s before
    // checking for one; the service's connection checks after PostgreSQL's default second, so
    // its statement is the one aborted (40P01).
    const other = new Client({ connectionString: t.config.databaseUrl });
    await other.connect();
    let otherDone: Promise<unknown> = Promise.resolve();
    try {
      const changed = changeAfter('attempt read', async () => {
        await other.query('begin');
        await other.query(`set local deadlock_timeout = '30s'`);
        await other.query('select id from payment_link where id = $1 for update', [link.id]);
        otherDone = (async () => {
          try {
            // Asked on another connection: a transaction sees one snapshot of pg_stat_activity.
            await waitFor(
              async () =>
                Number(
                  (
                    await sql(
                      `select count(*) as n from pg_stat_activity
                        where datname = current_database() and wait_event_type = 'Lock' and query like 'with o as (select id from checkout_order where id = $1::int and xmin%'`,
                    )
                  )[0].n,
                ) > 0,
              10_000,
              'the guarded write to wait for the link',
            );
            await other.query('select id from checkout_order where reference = $1 for update', [reference]);
          } finally {
            await other.query('commit');
          }
        })();
      });
      const answer = await pay(reference);
      await otherDone;
      expect(changed()).toBe(true);
      expect(answer.body).toMatchObject({ statusCode: '00', message: 'Order payment successful' });
    } finally {
      await otherDone.catch(() => undefined);
      await other.end();
    }
    expect((await conflicts()).attempt).toBe(before + 1);
    const rows = await rowsOf(reference);
    expect(rows.payments).toEqual([{ status_id: 5 }]);
    expect(rows.timeline.filter((e: string) => e === 'payment.initiated')).toHaveLength(1);
    expect(rows.events.map((e) => e.notify_type as string)).toEqual(['successful']);
    expect(rows.deliveries).toBe(1);
  });
});
