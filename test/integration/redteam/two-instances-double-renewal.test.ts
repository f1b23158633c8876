import { startTestService, type TestService } from '../../support/service';
import { HOUR, useSubscriptionService } from './support';

/**
 * The claim (recurring-billing.service.ts:63-71, chargeDue) is one READ COMMITTED statement:
 *   select r.id from recurring_payment r where r.state = 'active' and r.next_charge_at <= now
 *     and not exists (a Processing order of r) order by r.next_charge_at limit 1 for update of r skip locked
 * and the claiming transaction never updates the recurring_payment row: it only inserts the
 * renewal order. The NOT EXISTS is evaluated against the statement's snapshot. When instance A's
 * claim commits after instance B's claim statement began but before B's scan reaches the row, the
 * row is no longer locked (B does not skip it) and was not updated (PostgreSQL re-checks nothing),
 * and B's snapshot does not see A's Processing order: B claims the same subscription again and
 * the customer is charged twice for the same period.
 *
 * B's scan takes time when many subscriptions are due and their renewals are being charged
 * (Processing orders, which the NOT EXISTS filters out row by row): the state of every sweep at
 * the top of a busy period. The filler rows below stand for those renewals in flight. The only
 * orchestration is when B starts: while A holds its claim (A's own code then runs unchanged).
 */
describe('red team: two instances sweeping subscriptions at once', () => {
  const s = useSubscriptionService('rt_two_instances');
  let b: TestService;
  beforeAll(async () => {
    b = await startTestService({ DATABASE_URL: s.url() }, { clock: s.clock });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  /** Subscriptions due earlier whose renewals are being charged right now (Processing). */
  async function fillInFlightRenewals(environmentId: number, N = 250_000) {
    await s.sql(
      `insert into checkout_order (environment_id, reference, processor_reference, payment_reference, amount, currency, total_charged_amount, narration, redirect_url, status_id)
       select ?, 'FILL-' || g, 'PRF' || g, 'PYF' || g, 1, 'NGN', 1, 'x', 'https://m.test', 3 from generate_series(1, ?) g`,
      [environmentId, N],
    );
    await s.sql(
      `insert into recurring_payment (reference, environment_id, order_id, frequency_id, number_of_payments, payments_made, state, next_charge_at)
       select 'RPF-' || o.id, o.environment_id, o.id, 1, 12, 1, 'active', ?::timestamptz - interval '1 day' from checkout_order o where o.reference like 'FILL-%'`,
      [s.clock.now()],
    );
    await s.sql(`update checkout_order o set recurring_payment_id = r.id from recurring_payment r where r.order_id = o.id and o.reference like 'FILL-%'`);
    await s.sql(`analyze recurring_payment`);
    await s.sql(`analyze checkout_order`);
    // Instance B's pool is warm, as in a running service.
    await Promise.all(Array.from({ length: 4 }, () => b.service.runtime.ctx.orm.em.getConnection().execute('select 1')));
  }

  /** One period's sweep on both instances: B's sweep begins while A holds its claim; the acquirer answers in 1.5 s. Answers what each charged. */
  async function sweepBothInstances(): Promise<number[]> {
    const slow = (processor: { chargeToken: (req: any) => Promise<any> }) => {
      const original = processor.chargeToken.bind(processor);
      processor.chargeToken = async (req) => {
        await new Promise((r) => setTimeout(r, 1500));
        return original(req);
      };
      return () => (processor.chargeToken = original);
    };
    const restoreA = slow(s.processor() as never);
    const restoreB = slow((b.service.runtime.ctx.services.payments as unknown as { processors: { test: never } }).processors.test);
    const billingA = s.services().recurring;
    const billingB = b.service.runtime.ctx.services.recurring;
    let sweepB: Promise<number> | undefined;
    const a = billingA as unknown as { applyLinkRules: (...args: unknown[]) => Promise<unknown> };
    const applyLinkRules = a.applyLinkRules;
    a.applyLinkRules = async function (this: unknown, ...args: unknown[]) {
      if (!sweepB) {
        sweepB = billingB.chargeDue();
        // A goes on as soon as B's claim statement is running.
        for (let i = 0; i < 200; i++) {
          const running = await s.sql(`select 1 from pg_stat_activity where state = 'active' and query like '%skip locked%' and pid <> pg_backend_pid()`);
          if (running.length > 0) break;
          await new Promise((r) => setTimeout(r, 2));
        }
      }
      return applyLinkRules.apply(this, args);
    };
    try {
      const chargedA = await billingA.chargeDue();
      return [chargedA, await sweepB!];
    } finally {
      a.applyLinkRules = applyLinkRules;
      restoreA();
      restoreB();
    }
  }

  it('charges one period of one subscription once, even when a second instance sweeps while the first claims it', async () => {
    const { recurring } = await s.subscribe(5);
    await fillInFlightRenewals(recurring.environment_id);
    s.clock.advance(HOUR);
    const charged = await sweepBothInstances();

    const renewals = (await s.ordersOf(recurring.id)).slice(1);
    const money = await s.sandboxChargesOf(recurring.id);
    // This test's subscription ends here, whatever happened: the next test's sweep finds only its own.
    await s.sql(`update recurring_payment set state = 'cancelled', next_charge_at = null where id = ?`, [recurring.id]);
    expect({
      charged,
      renewals: renewals.map((r: { reference: string; status_id: number }) => [r.reference, r.status_id]),
      approvedCharges: money.filter((c: { state: string }) => c.state === 'approved').length,
    }).toEqual({
      charged: [1, 0],
      renewals: [[`${recurring.reference}-2`, 5]],
      approvedCharges: 1,
    });
  }, 300_000);

  it('never charges more than the number of payments: the last renewal charged twice leaves a charge taken but never settled', async () => {
    // Two payments: the first, and one renewal.
    const { recurring } = await s.subscribe(2);
    s.clock.advance(HOUR);
    await sweepBothInstances();
    const money = await s.sandboxChargesOf(recurring.id);
    const renewals = (await s.ordersOf(recurring.id)).slice(1);
    expect({
      approvedCharges: money.filter((c: { state: string }) => c.state === 'approved').length,
      renewalStatuses: renewals.map((r: { status_id: number }) => r.status_id),
      books: await s.recurringRow(recurring.id),
    }).toEqual({
      approvedCharges: 1,
      renewalStatuses: [5],
      books: expect.objectContaining({ state: 'completed', payments_made: 2 }),
    });
  }, 300_000);
});
