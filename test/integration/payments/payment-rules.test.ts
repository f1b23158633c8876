import { leavePagesOpen } from '../../support/abandoned-pages';
import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const customer = { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' };
const card = (cardNumber = '4111111111111111') => ({ cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing });
const paypal = { fullName: 'Ada Obi', mobile: '+2348012345678', house: '4', billingAddress: billing };

let counter = 0;
const nextRef = () => `PR-${process.pid}-${Date.now()}-${++counter}`;

describe('payment rules: minimum amounts, fees never above the amount, PayPal only when enabled', () => {
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
  });
  afterAll(async () => {
    await t.close();
  });

  const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
  const fee = (merchant: CreatedMerchant, plaintext: unknown) =>
    postEncrypted(t.baseUrl, '/checkout/order/fee', merchant.keys.test.publicKey, merchant.keys.test.encryptionKey, plaintext);
  const createOrder = async (merchant: CreatedMerchant, amount: number | string, currency = 'NGN') => {
    const reference = nextRef();
    const res = await postEncrypted(t.baseUrl, '/checkout/order/create', merchant.keys.test.publicKey, merchant.keys.test.encryptionKey, {
      customer,
      order: { amount, reference, description: 'Tiny', currency },
      payment: { RedirectUrl: 'https://m.test/back' },
    });
    expect(res.body.statusCode).toBe('01');
    return reference;
  };
  const pay = (merchant: CreatedMerchant, reference: string, method: 'C' | 'PAYPAL') =>
    postEncrypted(t.baseUrl, '/checkout/order/pay', merchant.keys.test.publicKey, merchant.keys.test.encryptionKey, {
      reference,
      paymentOption: method,
      country: 'NG',
      ...(method === 'C' ? { card: card() } : { paypal }),
    });
  const orderRow = async (reference: string) =>
    (
      await sql(
        `select status_id, fee::text, subsidiary_fee::text, (select count(*)::int from order_payment p where p.order_id = o.id) as attempts
                  from checkout_order o where reference = ?`,
        [reference],
      )
    )[0];
  const refused = (message: string) => ({ status: 400, body: { status: 'failed', statusCode: 'VAL400', message } });

  it('refuses a quote below the option minimum, naming the minimum, and quotes at the minimum', async () => {
    expect(await fee(m, { amount: 0.01, paymentOption: 'PAYPAL' })).toMatchObject(refused('The Amount field must be at least NGN 1,000.00 to pay by PayPal.'));
    expect(await fee(m, { amount: 999.99, paymentOption: 'PAYPAL', currency: 'NGN' })).toMatchObject(
      refused('The Amount field must be at least NGN 1,000.00 to pay by PayPal.'),
    );
    expect(await fee(m, { amount: 0.99, paymentOption: 'C' })).toMatchObject(refused('The Amount field must be at least NGN 1.00 to pay by card.'));
    expect(await fee(m, { amount: 0.29, paymentOption: 'C', currency: 'USD' })).toMatchObject(
      refused('The Amount field must be at least USD 0.30 to pay by card.'),
    );

    const atMinimum = await fee(m, { amount: 1000, paymentOption: 'PAYPAL' });
    expect(atMinimum.body.data).toMatchObject({ amount: 1000, fee: 144, paymentOption: 'PAYPAL' });
    expect((await fee(m, { amount: 1, paymentOption: 'C' })).body.data).toMatchObject({ amount: 1, fee: 0.02 });
  });

  it('refuses to pay an order below the minimum of the option used, and changes nothing', async () => {
    const tiny = await createOrder(m, '0.01');
    expect(await pay(m, tiny, 'PAYPAL')).toMatchObject(refused('The Amount field must be at least NGN 1,000.00 to pay by PayPal.'));
    expect(await pay(m, tiny, 'C')).toMatchObject(refused('The Amount field must be at least NGN 1.00 to pay by card.'));
    // No attempt, and the card fee of creation (1.5 % of 0.01) is not replaced by PayPal's NGN 100.00.
    expect(await orderRow(tiny)).toEqual({ status_id: 1, fee: '0.0000', subsidiary_fee: '0.0000', attempts: 0 });

    const small = await createOrder(m, 500);
    expect(await pay(m, small, 'PAYPAL')).toMatchObject(refused('The Amount field must be at least NGN 1,000.00 to pay by PayPal.'));
    const paid = await pay(m, small, 'C');
    expect(paid.body.statusCode).toBe('02'); // 3-D Secure next: the card payment was accepted
  });

  it("raises the minimum so that a merchant's fee never reaches the amount", async () => {
    const heavy = await createTestMerchant(t);
    // A negotiated rule with a large flat part: 1 % + NGN 500.00 per card payment.
    await sql(`insert into fee_rule (subsidiary_id, payment_option, currency, rate, flat, cap) values (?, 'C', 'NGN', 0.01, 500, null)`, [heavy.subsidiary.id]);
    // 500 / (1 - 0.01) = 505.0505…: the first amount above its own fee is 505.06 (fee 505.05).
    expect(await fee(heavy, { amount: 400, paymentOption: 'C' })).toMatchObject(refused('The Amount field must be at least NGN 505.06 to pay by card.'));
    expect((await fee(heavy, { amount: 505.06, paymentOption: 'C' })).body.data).toMatchObject({ amount: 505.06, fee: 505.05 });

    // An order below it is created with a fee no larger than its amount, and cannot be paid.
    const reference = await createOrder(heavy, 100);
    const created = await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: heavy.keys.test.privateKey, body: { reference } });
    expect(created.body.data).toMatchObject({ fee: 100 });
    expect(await pay(heavy, reference, 'C')).toMatchObject(refused('The Amount field must be at least NGN 505.06 to pay by card.'));
  });

  it('refuses PayPal, at quote and at pay, for a merchant who turned it off', async () => {
    const cardOnly = await createTestMerchant(t);
    await sql(`update subsidiary set paypal_enabled = false where id = ?`, [cardOnly.subsidiary.id]);
    const off = refused('PayPal is not enabled for this merchant.');
    expect(await fee(cardOnly, { amount: 5000, paymentOption: 'PAYPAL' })).toMatchObject(off);
    const reference = await createOrder(cardOnly, 5000);
    expect(await pay(cardOnly, reference, 'PAYPAL')).toMatchObject(off);
    expect(await orderRow(reference)).toMatchObject({ status_id: 1, attempts: 0 });
    expect((await pay(cardOnly, reference, 'C')).body.statusCode).toBe('02');
  });

  describe('links with a limit', () => {
    const createLink = async (body: Record<string, string>) =>
      (
        await request(t.baseUrl, 'POST', '/checkout/links/create', {
          apiKey: m.keys.test.privateKey,
          body: { Description: 'd', AuthOption: 'AUTH', Amount: '2500', ...body },
        })
      ).body.data.paymentLink;
    /** A customer starts paying on the link and reaches the 3-D Secure page. */
    const startPaying = async (linkId: number, email: string) => {
      const reference = nextRef();
      const created = await postEncrypted(t.baseUrl, '/checkout/order/create', m.keys.test.publicKey, m.keys.test.encryptionKey, {
        customer: { ...customer, email },
        order: { amount: 2500, reference, description: 'Seat', currency: 'NGN' },
        payment: { RedirectUrl: 'https://m.test/back', paymentLinkId: linkId },
      });
      expect(created.body.statusCode).toBe('01');
      return { reference, paid: await pay(m, reference, 'C') };
    };
    const leaveOpen = (...references: string[]) => leavePagesOpen(sql, ...references);
    const statusOf = async (reference: string) =>
      (await sql(`select status_id, payment_response_code from checkout_order where reference = ?`, [reference]))[0];

    it('lets a new customer pay a Limit=2 link that two abandoned 3-D Secure pages fill, superseding the oldest only', async () => {
      const link = await createLink({ Name: 'Two seats', PaymentType: 'MC', Limit: '2' });
      const first = await startPaying(link.id, `first-${counter}@example.test`);
      const second = await startPaying(link.id, `second-${counter}@example.test`);
      expect([first.paid.body.statusCode, second.paid.body.statusCode]).toEqual(['02', '02']);
      await leaveOpen(first.reference, second.reference);

      const third = await startPaying(link.id, `third-${counter}@example.test`);
      expect(third.paid.status).toBe(200);
      expect(third.paid.body.statusCode).toBe('02');
      expect(await statusOf(first.reference)).toEqual({ status_id: 4, payment_response_code: 'Z3' });
      expect(await statusOf(second.reference)).toEqual({ status_id: 2, payment_response_code: '02' });
    });

    it('does not overtake a customer whose page opened a moment ago: the newer customer is told the link is being paid', async () => {
      const link = await createLink({ Name: 'Last seat', PaymentType: 'MC', Limit: '1' });
      const reading = await startPaying(link.id, `reading-${counter}@example.test`);
      expect(reading.paid.body.statusCode).toBe('02');
      const late = await startPaying(link.id, `late-${counter}@example.test`);
      expect(late.paid).toMatchObject(refused('Another payment on this payment link is in progress; try again in a few minutes.'));
      expect(await statusOf(reading.reference)).toEqual({ status_id: 2, payment_response_code: '02' });
      // Once the page has been open a while, the seat goes to whoever pays.
      await leaveOpen(reading.reference);
      expect((await startPaying(link.id, `later-${counter}@example.test`)).paid.body.statusCode).toBe('02');
      expect(await statusOf(reading.reference)).toEqual({ status_id: 4, payment_response_code: 'Z3' });
    });

    it('supersedes nothing while a limited link has room', async () => {
      const link = await createLink({ Name: 'Three seats', PaymentType: 'MC', Limit: '3' });
      const first = await startPaying(link.id, `a-${counter}@example.test`);
      const second = await startPaying(link.id, `b-${counter}@example.test`);
      expect(second.paid.body.statusCode).toBe('02');
      expect(await statusOf(first.reference)).toEqual({ status_id: 2, payment_response_code: '02' });
    });

    it('still refuses a customer when paid customers fill the limit', async () => {
      const link = await createLink({ Name: 'One seat', PaymentType: 'MC', Limit: '1', AuthOption: 'NOAUTH' });
      const paid = await startPaying(link.id, `paid-${counter}@example.test`);
      expect(paid.paid.body.statusCode).toBe('00');
      const late = await startPaying(link.id, `late-${counter}@example.test`);
      expect(late.paid).toMatchObject(refused('This payment link has reached its limit of paying customers.'));
    });
  });
});
