import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { createScratchDatabase } from '../../support/scratch-database';
import { encryptPayload } from '../../support/payload-client';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { ManualClock } from '../../../src/shared/clock';

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const customer = { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' };
const card = { cardNumber: '4111111111111111', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing };
const HOUR = 3600_000;
const START = new Date('2026-11-21T10:00:00Z');

let counter = 0;
const nextRef = () => `SR-${process.pid}-${Date.now()}-${++counter}`;

/**
 * Subscriptions belong to subscription links and obey them. A scratch database of its own:
 * the renewal job charges every due subscription it finds, so it must find only this file's.
 */
describe('subscription rules', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let drop: () => Promise<void>;
  const clock = new ManualClock(START);
  beforeAll(async () => {
    const scratch = await createScratchDatabase('subscription_rules');
    drop = scratch.drop;
    t = await startTestService({ DATABASE_URL: scratch.url }, { clock });
    m = await createTestMerchant(t);
  });
  afterAll(async () => {
    await t?.close();
    await drop?.();
  });

  const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
  const chargeDue = () => t.service.runtime.ctx.services.recurring.chargeDue();
  /** Runs `body` with the business clock moved on by `ms`, and puts the clock back afterwards, whatever happens. */
  async function later<T>(ms: number, body: () => Promise<T>): Promise<T> {
    const before = clock.now();
    clock.advance(ms);
    try {
      return await body();
    } finally {
      clock.set(before);
    }
  }

  const createLink = async (body: Record<string, string>) => {
    const res = await request(t.baseUrl, 'POST', '/checkout/links/create', {
      apiKey: m.keys.test.privateKey,
      body: { Name: 'Gym', Description: 'Plan', AuthOption: 'NOAUTH', Amount: '500', ...body },
    });
    return res;
  };
  const createOrder = (payment: Record<string, unknown>, reference = nextRef()) =>
    postEncrypted(t.baseUrl, '/checkout/order/create', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      customer,
      order: { amount: 500, reference, description: 'Gym', currency: 'NGN' },
      payment: { RedirectUrl: 'https://m.test/back', ...payment },
    });
  const editLink = (id: number, body: Record<string, string>) =>
    request(t.baseUrl, 'PATCH', `/checkout/links/${id}/edit`, { apiKey: m.keys.test.privateKey, body: { Name: 'Gym', Description: 'Plan', ...body } });
  /** Ends a test's subscription, so that the next test's renewal run finds only its own. */
  const cancel = async (reference: string) =>
    expect((await request(t.baseUrl, 'PATCH', `/checkout/links/recurringpayment/${reference}/cancel`, { apiKey: m.keys.test.privateKey })).status).toBe(200);
  const setActive = (id: number, active: boolean) =>
    request(t.baseUrl, 'PATCH', `/checkout/links/${id}/status/${active ? 'activate' : 'disable'}`, { apiKey: m.keys.test.privateKey });

  /** An hourly subscription of `payments` payments on a new link, paid now (no 3-D Secure). */
  async function subscribe(payments: number) {
    const link = (await createLink({ PaymentType: 'SUB', FrequencyId: '1', NumberOfPayments: String(payments) })).body.data.paymentLink;
    const reference = nextRef();
    expect((await createOrder({ paymentLinkId: link.id }, reference)).body.statusCode).toBe('01');
    const paid = await postEncrypted(t.baseUrl, '/checkout/order/pay', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      reference,
      paymentOption: 'C',
      country: 'NG',
      card,
    });
    expect(paid.body.statusCode).toBe('00');
    const [recurring] = await sql(`select r.* from recurring_payment r join checkout_order o on o.id = r.order_id where o.reference = ?`, [reference]);
    return { link, reference, recurring };
  }
  const recurringRow = async (id: number) => {
    const [row] = await sql(`select state, payments_made, next_charge_at from recurring_payment where id = ?`, [id]);
    return { ...row, next_charge_at: row.next_charge_at === null ? null : new Date(row.next_charge_at) };
  };
  const timelineOf = async (reference: string) =>
    (await sql(`select e.event from timeline_event e join checkout_order o on o.id = e.order_id where o.reference = ? order by e.id`, [reference])).map(
      (r: any) => r.event,
    );

  describe('frequencies belong to subscription links', () => {
    it('refuses a frequency or a number of payments on a single-charge link, on its orders and on plain orders', async () => {
      const refusedLink = await createLink({ PaymentType: 'SC', FrequencyId: '1', NumberOfPayments: '3' });
      expect(refusedLink).toMatchObject({
        status: 400,
        body: { statusCode: 'VAL400', message: 'The FrequencyId field is only for subscription links (PaymentType SUB).' },
      });

      const single = (await createLink({ PaymentType: 'SC' })).body.data.paymentLink;
      expect((await createOrder({ paymentLinkId: single.id, frequencyId: 1, numberOfPayments: 3 })).body).toMatchObject({
        statusCode: 'VAL400',
        message: 'The FrequencyId field is only for orders of subscription links (PaymentType SUB).',
      });
      expect((await createOrder({ numberOfPayments: 3 })).body).toMatchObject({
        statusCode: 'VAL400',
        message: 'The NumberOfPayments field is only for orders of subscription links (PaymentType SUB).',
      });
      expect(await sql(`select count(*)::int as n from checkout_order where payment_link_id = ?`, [single.id])).toEqual([{ n: 0 }]);
    });

    it("gives a subscription link monthly terms of 12 payments by default, and its orders the link's terms", async () => {
      const link = (await createLink({ PaymentType: 'SUB' })).body.data.paymentLink;
      expect(await sql(`select frequency_id, number_of_payments from payment_link where id = ?`, [link.id])).toEqual([
        { frequency_id: 6, number_of_payments: 12 },
      ]);
      const reference = nextRef();
      expect((await createOrder({ paymentLinkId: link.id }, reference)).body.statusCode).toBe('01');
      expect(await sql(`select frequency_id, number_of_payments from checkout_order where reference = ?`, [reference])).toEqual([
        { frequency_id: 6, number_of_payments: 12 },
      ]);
      // An order may repeat the link's terms, never change them.
      expect((await createOrder({ paymentLinkId: link.id, frequencyId: 6, numberOfPayments: 12 })).body.statusCode).toBe('01');
      expect((await createOrder({ paymentLinkId: link.id, frequencyId: 1 })).body).toMatchObject({
        statusCode: 'VAL400',
        message: 'The FrequencyId field must be 6, the frequency of the payment link.',
      });
      expect((await createOrder({ paymentLinkId: link.id, numberOfPayments: 1 })).body).toMatchObject({
        statusCode: 'VAL400',
        message: 'The NumberOfPayments field must be 12, the number of payments of the payment link.',
      });
    });

    it('pays a subscription link on the hosted page and sets up the subscription on its terms', async () => {
      const link = (await createLink({ PaymentType: 'SUB', FrequencyId: '3', NumberOfPayments: '4' })).body.data.paymentLink;
      const res = await request(t.baseUrl, 'POST', `/pay/${link.reference}`, {
        body: { paymentOption: 'C', customer, data: encryptPayload({ card }, m.keys.test.encryptionKey) },
      });
      expect(res.status).toBe(200);
      const landed = new URL(res.body.redirectUrl);
      expect(landed.searchParams.get('status')).toBe('successful');
      const [recurring] = await sql(
        `select r.frequency_id, r.number_of_payments, r.payments_made, r.state from recurring_payment r
           join checkout_order o on o.id = r.order_id where o.reference = ?`,
        [landed.searchParams.get('reference')],
      );
      expect(recurring).toEqual({ frequency_id: 3, number_of_payments: 4, payments_made: 1, state: 'active' });
    });
  });

  describe('renewals obey the link', () => {
    it('skips renewals while the link is disabled, recording each, and charges again once it is active', async () => {
      const { link, reference, recurring } = await subscribe(3);
      expect((await setActive(link.id, false)).status).toBe(200);
      await later(HOUR, async () => {
        expect(await chargeDue()).toBe(0);
        expect(await recurringRow(recurring.id)).toEqual({ state: 'active', payments_made: 1, next_charge_at: new Date(START.getTime() + 2 * HOUR) });
      });
      expect(await timelineOf(reference)).toEqual(['order.created', 'payment.initiated', 'order.settled', 'subscription.renewal_skipped']);

      expect((await setActive(link.id, true)).status).toBe(200);
      await later(2 * HOUR, async () => {
        expect(await chargeDue()).toBe(1);
        expect(await recurringRow(recurring.id)).toMatchObject({ state: 'active', payments_made: 2 });
      });
      await cancel(recurring.reference);
    });

    it('stops a subscription whose link no longer sells one', async () => {
      const { link, reference, recurring } = await subscribe(5);
      expect((await editLink(link.id, { PaymentType: 'SC', Amount: '500' })).status).toBe(200);
      await later(HOUR, async () => {
        expect(await chargeDue()).toBe(0);
      });
      expect(await recurringRow(recurring.id)).toEqual({ state: 'stopped', payments_made: 1, next_charge_at: null });
      expect((await timelineOf(reference)).at(-1)).toBe('subscription.stopped');
      await later(10 * HOUR, async () => {
        expect(await chargeDue()).toBe(0);
      });
      expect(await sql(`select count(*)::int as n from checkout_order where recurring_payment_id = ?`, [recurring.id])).toEqual([{ n: 1 }]);
    });

    it('charges the periods missed while the clock jumped once, not once each', async () => {
      const { recurring } = await subscribe(5);
      // Due at 11:00; nothing ran until 13:30.
      await later(3.5 * HOUR, async () => {
        expect(await chargeDue()).toBe(1);
        expect(await chargeDue()).toBe(0);
      });
      // The schedule keeps its hour: the next charge is the first one still ahead, 14:00.
      expect(await recurringRow(recurring.id)).toEqual({ state: 'active', payments_made: 2, next_charge_at: new Date(START.getTime() + 4 * HOUR) });
      await cancel(recurring.reference);
    });
  });
});
