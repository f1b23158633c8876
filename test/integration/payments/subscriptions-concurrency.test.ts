import { Client } from 'pg';
import { startTestService, type TestService } from '../../support/service';
import { request } from '../../support/http';
import { HOUR, useSubscriptionService } from '../../support/subscription-service';
import type { FinalProcessorResult, PaymentProcessor } from '../../../src/payments/processor';

/** The advisory lock a held claim statement waits on (the test's own number). */
const CLAIM_HOLD_KEY = 770_001;

describe('subscriptions: two instances sweeping at once, and a cancel racing a renewal', () => {
  const s = useSubscriptionService('subscriptions_concurrency');
  let b: TestService;
  beforeAll(async () => {
    // A second instance of the service on the same database, with its own pool and processor object.
    b = await startTestService({ DATABASE_URL: s.url() }, { clock: s.clock });
  }, 120_000);
  afterAll(async () => {
    await b?.close();
  });

  /** Runs `before` once, right before the first saved-card charge `processor` is asked for (then charges as usual). */
  function beforeFirstCharge(processor: PaymentProcessor, before: () => Promise<unknown>): () => void {
    const original = processor.chargeToken.bind(processor);
    let done = false;
    processor.chargeToken = async (req): Promise<FinalProcessorResult> => {
      if (!done) {
        done = true;
        await before();
      }
      return original(req);
    };
    return () => (processor.chargeToken = original);
  }

  /**
   * Instance B's next claim statement waits, once it started (its snapshot taken) and before it
   * reads a row, on an advisory lock the test holds: the statement of a busy sweep whose scan is
   * slow, made exact. Answers the function that stops rewriting B's statements.
   */
  function holdNextClaimOf(instance: TestService): () => void {
    const connection = instance.service.runtime.ctx.orm.em.getConnection();
    const original = connection.execute.bind(connection) as (...args: unknown[]) => Promise<unknown>;
    let held = false;
    const spy = jest.spyOn(connection, 'execute').mockImplementation(((query: unknown, ...rest: unknown[]) => {
      if (!held && typeof query === 'string' && query.includes('skip locked')) {
        held = true;
        const waiting = query.replace('where r.state', `where (select pg_advisory_xact_lock_shared(${CLAIM_HOLD_KEY})::text) = '' and r.state`);
        if (waiting === query) throw new Error('the claim statement changed: this test no longer holds it');
        return original(waiting, ...rest);
      }
      return original(query, ...rest);
    }) as never);
    return () => spy.mockRestore();
  }

  /**
   * One period's sweep on both instances, interleaved as the race needs it: B's claim statement
   * starts while the test holds the advisory lock and waits on it; A claims the subscription and
   * commits; right before A's charge is sent, B's statement goes on (with its snapshot from
   * before A's claim) and B's sweep runs to its end; then A's charge goes on. Answers what each charged.
   */
  async function sweepBothInstances(): Promise<[number, number]> {
    const holder = new Client({ connectionString: s.url() });
    await holder.connect();
    const stopHolding = holdNextClaimOf(b);
    try {
      await holder.query('select pg_advisory_lock($1)', [CLAIM_HOLD_KEY]);
      const sweepB = b.service.runtime.ctx.services.recurring.chargeDue();
      await s.waitForLockWait('%skip locked%', 'advisory');
      let chargedB: number | undefined;
      const restore = beforeFirstCharge(s.processor(), async () => {
        await holder.query('select pg_advisory_unlock($1)', [CLAIM_HOLD_KEY]);
        chargedB = await sweepB;
      });
      try {
        const chargedA = await s.services().recurring.chargeDue();
        return [chargedA, chargedB ?? (await sweepB)];
      } finally {
        restore();
      }
    } finally {
      stopHolding();
      await holder.end();
    }
  }

  it('charges one period once when a second instance claims with a snapshot taken before the first claim committed', async () => {
    const { recurring } = await s.subscribe(5);
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
  });

  it('charges the last renewal once under the same race: the subscription completes with its payments counted, nothing left Processing', async () => {
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
      books: expect.objectContaining({ state: 'completed', payments_made: 2, next_charge_at: null }),
    });
  });

  const cancelByRest = (reference: string) =>
    request(s.t().baseUrl, 'PATCH', `/checkout/links/recurringpayment/${reference}/cancel`, { apiKey: s.m().keys.test.privateKey });

  it('a cancel that comes after the renewal is recorded but before its charge is sent: nothing is charged, the renewal fails Z5, the subscription stays cancelled', async () => {
    const { recurring } = await s.subscribe(3);
    s.clock.advance(HOUR);
    // The merchant's cancel arrives once the claim committed, before the charge is sent: right
    // before the first step towards the processor (the conditional start of the charge, or the
    // charge call itself where there is none).
    let cancel: Promise<{ status: number; body: any }> | undefined;
    const cancelOnce = async () => {
      if (cancel) return;
      cancel = cancelByRest(recurring.reference);
      await cancel;
    };
    const connection = s.t().service.runtime.ctx.orm.em.getConnection();
    const execute = connection.execute.bind(connection) as (...args: unknown[]) => Promise<unknown>;
    const spy = jest.spyOn(connection, 'execute').mockImplementation((async (query: unknown, ...rest: unknown[]) => {
      if (typeof query === 'string' && query.includes("set charge_state = 'charging'")) await cancelOnce();
      return execute(query, ...rest);
    }) as never);
    const restore = beforeFirstCharge(s.processor(), cancelOnce);
    try {
      await s.services().recurring.chargeDue();
    } finally {
      spy.mockRestore();
      restore();
    }
    const answer = await cancel!;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      data: { reference: recurring.reference, state: 'cancelled', cancelled: true },
      status: 'success',
      statusCode: '00',
      message: 'Recurring payment cancelled successfully',
    });
    expect(await s.sandboxChargesOf(recurring.id)).toEqual([]);
    const renewals = (await s.ordersOf(recurring.id)).slice(1);
    expect(renewals.map((r: { status_id: number; payment_response_code: string }) => [r.status_id, r.payment_response_code])).toEqual([[4, 'Z5']]);
    expect(await s.recurringRow(recurring.id)).toMatchObject({ state: 'cancelled', payments_made: 1, consecutive_failures: 0, next_charge_at: null });
  });

  it('settling a renewal approved after the merchant cancelled counts the payment, and leaves the subscription cancelled with nothing due', async () => {
    const { recurring } = await s.subscribe(3);
    s.clock.advance(HOUR);
    const tenant = await s.services().auth.authenticate(s.m().keys.test.privateKey);
    const restore = beforeFirstCharge(s.processor(), () => s.services().recurring.cancel(tenant, recurring.reference));
    try {
      await s.services().recurring.chargeDue();
    } finally {
      restore();
    }
    expect((await s.sandboxChargesOf(recurring.id)).map((c: { state: string }) => c.state)).toEqual(['approved']);
    expect(await s.recurringRow(recurring.id)).toMatchObject({ state: 'cancelled', payments_made: 2, next_charge_at: null });
    // Cancelled: the next periods charge nothing.
    s.clock.advance(5 * HOUR);
    await s.services().recurring.chargeDue();
    expect(await s.ordersOf(recurring.id)).toHaveLength(2);
  });

  it('a cancel that comes while the renewal is at the processor answers so in its message, the body keeping its fields', async () => {
    const { recurring } = await s.subscribe(3);
    s.clock.advance(HOUR);
    let answer: { status: number; body: any } | undefined;
    const restore = beforeFirstCharge(s.processor(), async () => {
      answer = await cancelByRest(recurring.reference);
    });
    try {
      await s.services().recurring.chargeDue();
    } finally {
      restore();
    }
    expect(answer!.status).toBe(200);
    expect(answer!.body).toEqual({
      data: { reference: recurring.reference, state: 'cancelled', cancelled: true },
      status: 'success',
      statusCode: '00',
      message: 'Recurring payment cancelled; a renewal already sent to the processor may still be charged',
    });
    // Once that renewal is settled, a cancel again answers as usual.
    expect((await cancelByRest(recurring.reference)).body.message).toBe('Recurring payment cancelled successfully');
  });

  it('does not claim a second renewal of a period while one is Processing without a claim marker (made by an instance of the previous version during a rolling deploy)', async () => {
    const { recurring } = await s.subscribe(5);
    s.clock.advance(HOUR);
    const processor = s.processor();
    let second: number | undefined;
    const restore = beforeFirstCharge(processor, async () => {
      // The previous version's claim writes no marker.
      await s.sql(`update recurring_payment set charge_state = null where id = ?`, [recurring.id]);
      second = await s.services().recurring.chargeDue();
    });
    try {
      await s.services().recurring.chargeDue();
    } finally {
      restore();
    }
    const approved = (await s.sandboxChargesOf(recurring.id)).filter((c: { state: string }) => c.state === 'approved').length;
    await s.sql(`update recurring_payment set state = 'cancelled', next_charge_at = null where id = ?`, [recurring.id]);
    expect({ secondSweepCharged: second, approvedCharges: approved }).toEqual({ secondSweepCharged: 0, approvedCharges: 1 });
  });
});
