import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { ManualClock } from '../../../src/shared/clock';
import { createScratchDatabase } from '../../support/scratch-database';
import { OrderStatus } from '../../../src/orders/order-status';

let counter = 0;
const nextRef = () => `PAY-${process.pid}-${Date.now()}-${++counter}`;
const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const card = (cardNumber: string, extra: Record<string, string> = {}) => ({
  cardNumber,
  expiryMonth: '12',
  expiryYear: '30',
  cvv: '123',
  billingAddress: billing,
  ...extra,
});

describe('payments through the sandbox acquirer', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let clock: ManualClock;
  let scratch: { url: string; drop(): Promise<void> };
  beforeAll(async () => {
    clock = new ManualClock(new Date());
    // A database of this file's own: the authentication-timeout sweep acts on every order it finds.
    scratch = await createScratchDatabase('payments');
    t = await startTestService({ DATABASE_URL: scratch.url, AUTH_TIMEOUT_MS: '60000' }, { clock });
    m = await createTestMerchant(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await scratch?.drop();
  });
  // A test that moves the clock leaves the real time to the next one, even when it fails.
  afterEach(() => clock.set(new Date()));

  const k = () => m.keys.test;
  async function createOrder(reference = nextRef(), payment: Record<string, unknown> = {}, amount = 1000) {
    const res = await postEncrypted(t.baseUrl, '/checkout/order/create', k().publicKey, k().encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada+${reference}@example.test` },
      order: { amount, reference, description: 'Order', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/return?x=1', ...payment },
    });
    expect(res.body.statusCode).toBe('01');
    return reference;
  }
  const pay = (reference: string, body: Record<string, unknown>) =>
    postEncrypted(t.baseUrl, '/checkout/order/pay', k().publicKey, k().encryptionKey, { reference, country: 'NG', ...body });
  const payCard = (reference: string, number: string) => pay(reference, { paymentOption: 'C', card: card(number) });
  const verify = async (reference: string) =>
    (await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: k().privateKey, body: { reference } })).body.data;
  const submitOtp = (url: string, otp: string) =>
    fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ otp }).toString(),
    });

  it.each([['5123450000000008'], ['4111111111111111']])('approves %s after 3-D Secure with OTP 123456', async (number) => {
    const reference = await createOrder();
    const res = await payCard(reference, number);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'success', statusCode: '02', message: 'pending-authenticaion' });
    const redirectUrl: string = res.body.data.paymentDetail.redirectUrl;
    expect(redirectUrl.startsWith(`${t.config.publicUrl}/sandbox/3ds/`)).toBe(true);
    expect(res.body.data).toEqual({
      paymentDetail: { redirectUrl, recipientAccount: null, paymentReference: expect.stringMatching(/^PAY/) },
      bankTransferDetails: null,
      orderPayment: {
        orderId: expect.any(Number),
        orderPaymentReference: expect.stringMatching(/^OP/),
        currency: 'NGN',
        statusId: 2,
        orderPaymentResponseCode: '02',
        orderPaymentResponseMessage: 'Pending authentication',
        orderPaymentInstrument: expect.stringContaining(number.slice(-4)),
        remarks: '',
        totalAmount: 1000,
        fee: 15,
      },
    });
    expect((await verify(reference)).statusId).toBe(2);

    const page = await fetch(redirectUrl);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('name="otp"');
    const answer = await submitOtp(redirectUrl, '123456');
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toBe(`https://merchant.test/return?x=1&reference=${encodeURIComponent(reference)}&status=successful`);

    const details = await verify(reference);
    expect(details).toMatchObject({ statusId: 5, status: 'Successful', paymentResponseCode: '00', paymentMethod: 'Card Payment' });
    expect(details.datePaymentConfirmed).not.toBeNull();
    expect(details.orderPayments).toEqual([
      expect.objectContaining({ paymentOptionId: 2, paymentOption: 'Card Payment', statusId: 5, status: 'Successful', responseCode: '00' }),
    ]);
    expect(details.cardDetails).toEqual([
      expect.objectContaining({
        status: true,
        cardFirstSixDigits: number.slice(0, 6),
        cardLastFourDigits: number.slice(-4),
        cardExpiryMonth: '12',
        cardExpiryYear: '30',
        cardType: number.startsWith('4') ? 'Visa' : 'Mastercard',
        cardToken: expect.stringMatching(/^sbx_card_/),
      }),
    ]);

    // A double submit or a replay changes nothing, and the customer was sent back already: the outcome, no redirect.
    const again = await submitOtp(redirectUrl, '000000');
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('data-outcome="successful"');
    expect((await verify(reference)).statusId).toBe(5);
    // A settled order cannot be paid again.
    const repay = await payCard(reference, number);
    expect(repay.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The order has already been paid.' });
  });

  it('declines 4000000000000002 after 3-D Secure with 51 Insufficient funds', async () => {
    const reference = await createOrder();
    const res = await payCard(reference, '4000000000000002');
    const answer = await submitOtp(res.body.data.paymentDetail.redirectUrl, '123456');
    expect(answer.headers.get('location')).toContain('status=failed');
    const details = await verify(reference);
    expect(details).toMatchObject({ statusId: 4, status: 'Failed', paymentResponseCode: '51', paymentResponseMessage: 'Insufficient funds' });
    expect(details.orderPayments[0]).toMatchObject({ statusId: 4, responseCode: '51', responseMessage: 'Insufficient funds' });
  });

  it('fails authentication with a wrong OTP (Z1)', async () => {
    const reference = await createOrder();
    const res = await payCard(reference, '5123450000000008');
    const answer = await submitOtp(res.body.data.paymentDetail.redirectUrl, '654321');
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toContain('status=failed');
    expect(await verify(reference)).toMatchObject({ statusId: 4, paymentResponseCode: 'Z1', paymentResponseMessage: 'Authentication failed' });
  });

  it('refuses a card failing the Luhn check and leaves the order Initiated', async () => {
    const reference = await createOrder();
    const res = await payCard(reference, '4111111111111112');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The CardNumber field is not a valid card number.' });
    expect((await verify(reference)).statusId).toBe(1);
  });

  it.each([
    [{ paymentOption: 'C' }, 'The Card field is required.'],
    [{ card: card('4111111111111111') }, 'payment option is required!'],
    [{ paymentOption: 'BANK', card: card('4111111111111111') }, 'PaymentOption is currently not supported.'],
    [{ paymentOption: 'C', card: card('4111111111111111', { expiryMonth: '13' }) }, 'The ExpiryMonth field must be two digits from 01 to 12.'],
    [{ paymentOption: 'C', card: card('4111111111111111', { expiryYear: '20' }) }, 'The card has expired.'],
    [{ paymentOption: 'C', card: card('4111111111111111', { cvv: '12' }) }, 'The Cvv field must be 3 or 4 digits.'],
    // A billing address is optional (issue 11), but one that is given must be whole.
    [{ paymentOption: 'C', card: { ...card('4111111111111111'), billingAddress: { street: '1 Marina' } } }, 'The City field is required.'],
  ])('validates %j', async (body, message) => {
    const reference = await createOrder();
    const res = await pay(reference, body);
    expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message });
    expect((await verify(reference)).statusId).toBe(1);
  });

  it('answers 13 for an unknown order', async () => {
    const res = await payCard('no-such-order', '4111111111111111');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ status: 'failed', status_code: '13', message: 'Order not found at the moment' });
  });

  it('refuses live payments until a live acquirer is configured', async () => {
    const reference = nextRef();
    await postEncrypted(t.baseUrl, '/checkout/order/create', m.keys.live.publicKey, m.keys.live.encryptionKey, {
      customer: { firstname: 'A', lastname: 'B', mobile: '+2348012345678', country: 'NG', email: 'a@b.test' },
      order: { amount: 10, reference, description: 'x', currency: 'NGN' },
      payment: { RedirectUrl: 'https://m.test' },
    });
    const res = await postEncrypted(t.baseUrl, '/checkout/order/pay', m.keys.live.publicKey, m.keys.live.encryptionKey, {
      reference,
      paymentOption: 'C',
      country: 'NG',
      card: card('4111111111111111'),
    });
    expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'Live payments are currently not supported.' });
  });

  it.each([
    ['approve', 5, 'successful'],
    ['cancel', 4, 'failed'],
  ])('PayPal: %s', async (decision, statusId, status) => {
    const reference = await createOrder();
    const res = await pay(reference, {
      paymentOption: 'PAYPAL',
      paypal: { fullName: 'Ada Obi', mobile: '+2348012345678', house: '12B', billingAddress: billing },
    });
    expect(res.body.statusCode).toBe('02');
    const url: string = res.body.data.paymentDetail.redirectUrl;
    expect(url.startsWith(`${t.config.publicUrl}/sandbox/paypal/`)).toBe(true);
    expect(await (await fetch(url)).text()).toContain('value="approve"');
    const answer = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `decision=${decision}`,
    });
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toContain(`status=${status}`);
    const details = await verify(reference);
    expect(details.statusId).toBe(statusId);
    expect(details.orderPayments[0]).toMatchObject({ paymentOptionId: 3, paymentOption: 'PayPal' });
    if (decision === 'cancel') expect(details.paymentResponseCode).toBe('17');
  });

  it('lets exactly one of concurrent pay requests on one order proceed', async () => {
    const reference = await createOrder();
    const results = await Promise.all(Array.from({ length: 6 }, () => payCard(reference, '5123450000000008')));
    const accepted = results.filter((r) => r.body.statusCode === '02');
    expect(accepted).toHaveLength(1);
    for (const r of results.filter((x) => x.body.statusCode !== '02')) {
      expect(r.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'A payment of this order is already awaiting authentication.' });
    }
    expect((await verify(reference)).orderPayments).toHaveLength(1);
  });

  it('settles once when the OTP is submitted twice at the same time', async () => {
    const reference = await createOrder();
    const url = (await payCard(reference, '5123450000000008')).body.data.paymentDetail.redirectUrl;
    const answers = await Promise.all([submitOtp(url, '123456'), submitOtp(url, '123456'), submitOtp(url, '111111')]);
    // One answer sends the customer back to the merchant; the others show the same outcome.
    expect(answers.filter((a) => a.status === 303)).toHaveLength(1);
    const redirected = new URL(answers.find((a) => a.status === 303)!.headers.get('location')!).searchParams.get('status');
    const shown = await Promise.all(answers.filter((a) => a.status !== 303).map(async (a) => /data-outcome="(\w+)"/.exec(await a.text())?.[1]));
    expect(shown).toEqual([redirected, redirected]);
    const rows = await t.service.runtime.ctx.orm.em
      .getConnection()
      .execute(
        `select count(*)::int as n from outbox_event e join checkout_order o on o.id = e.order_id where o.reference = ? and e.notify_type in ('successful', 'failed')`,
        [reference],
      );
    expect(rows[0].n).toBe(1);
  });

  describe('the way back to the merchant', () => {
    const open = (url: string) => fetch(url, { redirect: 'manual' });

    it('sends the customer back once after a wrong OTP, then shows the outcome to whoever opens the page, never redirecting', async () => {
      const reference = await createOrder();
      const url: string = (await payCard(reference, '5123450000000008')).body.data.paymentDetail.redirectUrl;
      const answer = await submitOtp(url, '654321');
      expect(answer.status).toBe(303);
      expect(answer.headers.get('location')).toContain('https://merchant.test/return');
      for (let i = 0; i < 3; i++) {
        const later = await open(url);
        expect(later.status).toBe(200);
        expect(later.headers.get('location')).toBeNull();
        const text = await later.text();
        expect(text).toContain('data-outcome="failed"');
        expect(text).not.toContain('merchant.test');
      }
      const repost = await submitOtp(url, '123456');
      expect(repost.status).toBe(200);
      expect(repost.headers.get('location')).toBeNull();
      expect(await repost.text()).not.toContain('merchant.test');
    });

    it('gives a customer whose attempt ended without them a link back on the first visit only (a PayPal page that expired)', async () => {
      const reference = await createOrder();
      const url: string = (
        await pay(reference, { paymentOption: 'PAYPAL', paypal: { fullName: 'Ada Obi', mobile: '+2348012345678', house: '12B', billingAddress: billing } })
      ).body.data.paymentDetail.redirectUrl;
      clock.advance(61_000);
      try {
        expect(await t.service.runtime.ctx.services.payments.expireStaleAuthentications()).toBeGreaterThanOrEqual(1);
      } finally {
        clock.advance(-61_000);
      }
      const first = await open(url);
      expect(first.status).toBe(200);
      const firstText = await first.text();
      expect(firstText).toContain('data-outcome="failed"');
      expect(firstText).toContain(`href="https://merchant.test/return?x=1&amp;reference=${encodeURIComponent(reference)}&amp;status=failed"`);
      const second = await open(url);
      expect(second.status).toBe(200);
      expect(await second.text()).not.toContain('merchant.test');
    });

    it('claims the return of a finished attempt exactly once among concurrent claims, and never for an unfinished one', async () => {
      const returns = t.service.runtime.ctx.services.merchantReturns;
      const reference = await createOrder();
      const url: string = (await payCard(reference, '5123450000000008')).body.data.paymentDetail.redirectUrl;
      const paymentReference = url.split('/').pop()!;
      expect(await returns.claim(paymentReference)).toBe(false);
      await t.service.runtime.ctx.services.payments.completeAuthentication(paymentReference, { method: 'C', otp: '123456' });
      const claims = await Promise.all(Array.from({ length: 8 }, () => returns.claim(paymentReference)));
      expect(claims.filter(Boolean)).toHaveLength(1);
      expect(await returns.claim(paymentReference)).toBe(false);
    });
  });

  it('fails an authentication left unfinished past the timeout (Z2)', async () => {
    const reference = await createOrder();
    await payCard(reference, '5123450000000008');
    expect(await t.service.runtime.ctx.services.payments.expireStaleAuthentications()).toBe(0);
    // Every authentication this file left unfinished (this one, and the order whose concurrent
    // pay requests one won) times out; nothing else shares this database.
    const [{ n: waiting }] = await t.service.runtime.ctx.orm.em
      .getConnection()
      .execute(`select count(*)::int as n from order_payment where status_id = ? and authentication_expires_at is not null`, [
        OrderStatus.PendingAuthentication,
      ]);
    expect(waiting).toBeGreaterThanOrEqual(1);
    clock.advance(61_000);
    expect(await t.service.runtime.ctx.services.payments.expireStaleAuthentications()).toBe(waiting);
    const details = await verify(reference);
    expect(details).toMatchObject({ statusId: 4, paymentResponseCode: 'Z2', paymentResponseMessage: 'Authentication expired' });
    const tenant = await t.service.runtime.ctx.services.auth.authenticate(k().publicKey);
    const timeline = await t.service.runtime.ctx.services.timeline.list(tenant, reference);
    expect(timeline.map((e) => e.event)).toEqual(['order.created', 'payment.initiated', 'authentication.failed', 'order.failed']);
  });

  describe('payment link rules', () => {
    async function link(body: Record<string, string>) {
      const res = await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: k().privateKey,
        body: { Name: 'Link', Description: 'd', Currency: 'NGN', AuthOption: 'AUTH', Amount: '1000', ...body },
      });
      return res.body.data.paymentLink as { id: number; reference: string };
    }

    it('NOAUTH links skip 3-D Secure and answer the final result', async () => {
      const l = await link({ PaymentType: 'MC', AuthOption: 'NOAUTH' });
      const ok = await createOrder(nextRef(), { paymentLinkId: l.id });
      const res = await payCard(ok, '4111111111111111');
      expect(res.body).toMatchObject({ status: 'success', statusCode: '00', message: 'Order payment successful' });
      expect(res.body.data.paymentDetail.redirectUrl).toContain('status=successful');
      expect((await verify(ok)).statusId).toBe(5);
      const declined = await createOrder(nextRef(), { paymentLinkId: l.id });
      const bad = await payCard(declined, '4000000000000002');
      expect(bad.status).toBe(402);
      expect(bad.body).toEqual({ status: 'failed', statusCode: '51', message: 'Insufficient funds' });
      expect((await verify(declined)).statusId).toBe(4);
    });

    it('SC links accept one successful payment', async () => {
      const l = await link({ PaymentType: 'SC', AuthOption: 'NOAUTH' });
      expect((await payCard(await createOrder(nextRef(), { paymentLinkId: l.id }), '4111111111111111')).body.statusCode).toBe('00');
      const second = await payCard(await createOrder(nextRef(), { paymentLinkId: l.id }), '4111111111111111');
      expect(second.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'This payment link has already been paid.' });
    });

    it('MC links accept many payments, up to Limit paying customers', async () => {
      const l = await link({ PaymentType: 'MC', AuthOption: 'NOAUTH', Limit: '2' });
      for (let i = 0; i < 2; i++) expect((await payCard(await createOrder(nextRef(), { paymentLinkId: l.id }), '4111111111111111')).body.statusCode).toBe('00');
      const third = await payCard(await createOrder(nextRef(), { paymentLinkId: l.id }), '4111111111111111');
      expect(third.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'This payment link has reached its limit of paying customers.' });
    });

    it('inactive links accept no payment', async () => {
      const l = await link({ PaymentType: 'MC' });
      const reference = await createOrder(nextRef(), { paymentLinkId: l.id });
      await request(t.baseUrl, 'PATCH', `/checkout/links/${l.id}/status/disable`, { apiKey: k().privateKey });
      expect((await payCard(reference, '4111111111111111')).body).toEqual({
        status: 'failed',
        statusCode: 'VAL400',
        message: 'The payment link is not active.',
      });
    });
  });
});
