import { startTestService, type TestService } from './service';
import { graphql, postEncrypted, request } from './http';
import { createTestMerchant } from './merchants';
import { createScratchDatabase } from './scratch-database';
import type { CreatedMerchant } from '../../src/merchants/merchant.service';
import { ManualClock } from '../../src/shared/clock';
import type { PaymentProcessor } from '../../src/payments/processor';

export const HOUR = 3600_000;
const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
let counter = 0;

/**
 * Subscription tests' common setup: the real service on a scratch database of the file's own
 * (the billing sweep finds only this file's subscriptions), a hand-moved clock, one merchant.
 * Call in the describe body.
 */
export function useSubscriptionService(database: string) {
  const clock = new ManualClock(new Date());
  const state: { t?: TestService; m?: CreatedMerchant; drop?: () => Promise<void>; url?: string } = {};
  beforeAll(async () => {
    const scratch = await createScratchDatabase(database);
    state.drop = scratch.drop;
    state.url = scratch.url;
    state.t = await startTestService({ DATABASE_URL: scratch.url }, { clock });
    state.m = await createTestMerchant(state.t);
  }, 120_000);
  afterAll(async () => {
    await state.t?.close();
    await state.drop?.();
  });
  afterEach(() => clock.set(new Date()));

  const t = () => state.t!;
  const m = () => state.m!;
  const services = () => t().service.runtime.ctx.services;
  const sql = (q: string, p: unknown[] = []): Promise<any[]> => t().service.runtime.ctx.orm.em.getConnection().execute(q, p);
  /** The service's own test-mode processor (the same object billing, payments and refunds call). */
  const processor = (): PaymentProcessor => (services().payments as unknown as { processors: { test: PaymentProcessor } }).processors.test;

  /** An hourly subscription of `numberOfPayments` payments on a new SUB link, its first payment approved (no 3-D Secure). */
  async function subscribe(numberOfPayments: number, opts: { amount?: string; merchant?: CreatedMerchant; card?: string } = {}) {
    const merchant = opts.merchant ?? m();
    const amount = opts.amount ?? '500';
    const link = (
      await request(t().baseUrl, 'POST', '/checkout/links/create', {
        apiKey: merchant.keys.test.privateKey,
        body: {
          Name: 'Gym',
          Description: 'Hourly plan',
          PaymentType: 'SUB',
          AuthOption: 'NOAUTH',
          Amount: amount,
          FrequencyId: '1',
          NumberOfPayments: String(numberOfPayments),
        },
      })
    ).body.data.paymentLink;
    const reference = `SUB-${process.pid}-${Date.now()}-${++counter}`;
    const created = await postEncrypted(t().baseUrl, '/checkout/order/create', merchant.keys.test.publicKey, merchant.keys.test.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: Number(amount), reference, description: 'Gym', currency: 'NGN' },
      payment: { RedirectUrl: 'https://m.test/back', paymentLinkId: link.id },
    });
    expect(created.body.statusCode).toBe('01');
    const paid = await postEncrypted(t().baseUrl, '/checkout/order/pay', merchant.keys.test.publicKey, merchant.keys.test.encryptionKey, {
      reference,
      paymentOption: 'C',
      country: 'NG',
      card: { cardNumber: opts.card ?? '4111111111111111', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
    });
    expect(paid.body.statusCode).toBe('00');
    const [recurring] = await sql(`select r.* from recurring_payment r join checkout_order o on o.id = r.order_id where o.reference = ?`, [reference]);
    return { link, reference, recurring };
  }

  const recurringRow = async (id: number) =>
    (await sql(`select state, payments_made, number_of_payments, consecutive_failures, next_charge_at from recurring_payment where id = ?`, [id]))[0];
  /** Every order of the subscription (the first included), oldest first. */
  const ordersOf = (recurringId: number) =>
    sql(`select id, reference, status_id, payment_response_code, total_charged_amount from checkout_order where recurring_payment_id = ? order by id`, [
      recurringId,
    ]);
  /** The sandbox's saved-card charges of the subscription's renewal orders (money actually taken). */
  const sandboxChargesOf = (recurringId: number) =>
    sql(
      `select a.state, a.amount, a.order_reference from sandbox_authorization a
         join order_payment p on p.reference = a.idempotency_key
         join checkout_order o on o.id = p.order_id
        where a.kind = 'charge' and o.recurring_payment_id = ? order by a.created_at`,
      [recurringId],
    );
  /** Waits until a statement whose text matches `like` waits for a lock of `kind` (`advisory`, `tuple`, `transactionid`, …; any when left out). */
  const waitForLockWait = async (like: string, kind?: string) => {
    for (let i = 0; i < 500; i++) {
      const [waiting] = await sql(
        `select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and (?::text is null or wait_event = ?) and query like ?`,
        [kind ?? null, kind ?? null, like],
      );
      if (waiting.n > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no statement like ${like} waited for a lock`);
  };
  const gql = async (query: string, variables: Record<string, unknown>, apiKey: string = m().keys.test.privateKey) =>
    (await graphql(t().baseUrl, query, variables, { 'api-key': apiKey })).body;

  return { clock, t, m, services, sql, processor, subscribe, recurringRow, ordersOf, sandboxChargesOf, waitForLockWait, gql, url: () => state.url! };
}
