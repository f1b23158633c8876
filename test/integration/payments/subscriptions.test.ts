import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { ManualClock } from '../../../src/shared/clock';

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const HOUR = 3600_000;

describe('subscriptions', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let clock: ManualClock;
  beforeAll(async () => {
    clock = new ManualClock(new Date('2026-11-21T10:00:00Z'));
    t = await startTestService({}, { clock });
    m = await createTestMerchant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);

  async function subscribe(reference: string, cardNumber: string, numberOfPayments: number) {
    const link = (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: { Name: 'Gym', Description: 'Hourly plan', PaymentType: 'SUB', AuthOption: 'NOAUTH', Amount: '500' },
      })
    ).body.data.paymentLink;
    const created = await postEncrypted(t.baseUrl, '/checkout/order/create', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 500, reference, description: 'Gym', currency: 'NGN' },
      payment: { RedirectUrl: 'https://m.test/back', paymentLinkId: link.id, frequencyId: 1, numberOfPayments },
    });
    expect(created.body.statusCode).toBe('01');
    return postEncrypted(t.baseUrl, '/checkout/order/pay', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      reference,
      paymentOption: 'C',
      country: 'NG',
      card: { cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
    });
  }

  const recurringOf = async (reference: string) =>
    (await sql(`select r.* from recurring_payment r join checkout_order o on o.id = r.order_id where o.reference = ?`, [reference]))[0];
  const chargesOf = async (recurringId: number) =>
    sql(`select reference, status_id, payment_response_code from checkout_order where recurring_payment_id = ? order by id`, [recurringId]);

  it('charges the saved card at the frequency until the number of payments is reached, then stops', async () => {
    const reference = `SUB-${Date.now()}`;
    const paid = await subscribe(reference, '4111111111111111', 3);
    expect(paid.body.statusCode).toBe('00');
    const verify = await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: m.keys.test.privateKey, body: { reference } });
    expect(verify.body.data.recurringPaymentId).toEqual(expect.any(Number));
    expect(verify.body.data.recurringPaymentReference).toMatch(/^RP/);

    let recurring = await recurringOf(reference);
    expect(recurring).toMatchObject({ state: 'active', payments_made: 1, number_of_payments: 3 });
    const { recurring: billing } = t.service.runtime.ctx.services;

    // Not yet due.
    expect(await billing.chargeDue()).toBe(0);
    clock.advance(HOUR);
    // Two schedulers at once (two instances): the due subscription is charged once.
    const [a, b] = await Promise.all([billing.chargeDue(), billing.chargeDue()]);
    expect(a + b).toBe(1);
    clock.advance(HOUR);
    expect(await billing.chargeDue()).toBe(1);
    recurring = await recurringOf(reference);
    expect(recurring).toMatchObject({ state: 'completed', payments_made: 3, next_charge_at: null });
    clock.advance(10 * HOUR);
    expect(await billing.chargeDue()).toBe(0);

    const charges = await chargesOf(recurring.id);
    expect(charges).toEqual([
      { reference, status_id: 5, payment_response_code: '00' },
      { reference: `${recurring.reference}-2`, status_id: 5, payment_response_code: '00' },
      { reference: `${recurring.reference}-3`, status_id: 5, payment_response_code: '00' },
    ]);
  });

  it('keeps charging other subscriptions when one fails for a reason of ours, and retries that one later', async () => {
    const blocked = `SUBX-${Date.now()}`;
    await subscribe(blocked, '4111111111111111', 3);
    const other = `SUBY-${Date.now()}`;
    await subscribe(other, '4111111111111111', 3);
    const stuck = await recurringOf(blocked);
    // The merchant happens to own an order named like the next renewal: the insert fails.
    await sql(
      `insert into checkout_order (environment_id, reference, processor_reference, payment_reference, amount, currency, total_charged_amount, narration, redirect_url)
       select environment_id, ?, ?, ?, 1, 'NGN', 1, 'x', 'https://m.test' from recurring_payment where id = ?`,
      [`${stuck.reference}-2`, `PRX${Date.now()}`, `PYX${Date.now()}`, stuck.id],
    );
    clock.advance(HOUR);
    await t.service.runtime.ctx.services.recurring.chargeDue();
    expect(await recurringOf(other)).toMatchObject({ state: 'active', payments_made: 2 });
    expect(await recurringOf(blocked)).toMatchObject({ state: 'active', payments_made: 1, consecutive_failures: 1 });
  });

  it('can be cancelled, after which nothing is charged', async () => {
    const reference = `SUBC-${Date.now()}`;
    await subscribe(reference, '5123450000000008', 5);
    const recurring = await recurringOf(reference);
    const tenant = await t.service.runtime.ctx.services.auth.authenticate(m.keys.test.privateKey);
    const cancelled = await t.service.runtime.ctx.services.recurring.cancel(tenant, recurring.reference);
    expect(cancelled.state).toBe('cancelled');
    clock.advance(5 * HOUR);
    await t.service.runtime.ctx.services.recurring.chargeDue();
    expect(await chargesOf(recurring.id)).toHaveLength(1);
  });

  it('retries a failed charge a bounded number of times, then fails the subscription', async () => {
    const reference = `SUBF-${Date.now()}`;
    await subscribe(reference, '4111111111111111', 4);
    const recurring = await recurringOf(reference);
    // The issuer starts declining the saved card.
    await sql(`update sandbox_authorization set outcome_code = '51', outcome_message = 'Insufficient funds' where token = ?`, [recurring.card_token]);
    for (let i = 0; i < 6; i++) {
      clock.advance(HOUR);
      await t.service.runtime.ctx.services.recurring.chargeDue();
    }
    expect(await recurringOf(reference)).toMatchObject({ state: 'failed', payments_made: 1, consecutive_failures: 4 });
    const charges = await chargesOf(recurring.id);
    expect(charges.slice(1).map((c: any) => c.payment_response_code)).toEqual(['51', '51', '51', '51']);
  });
});
