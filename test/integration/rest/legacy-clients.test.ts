import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { RecurringPayment } from '../../../src/payments/recurring-payment.entity';

let refCounter = 0;
const nextRef = () => `LEG-${process.pid}-${Date.now()}-${++refCounter}`;
const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '100001' };

const orderPlaintext = (reference: string, payment: Record<string, unknown> = { RedirectUrl: 'https://merchant.test/done' }) => ({
  customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
  order: { amount: 1000, reference, description: 'Two tickets', currency: 'NGN' },
  payment,
});

/** Issue 11 point 3: what deployed legacy clients send must work unchanged. */
describe('REST: legacy clients', () => {
  let t: TestService;
  let m: CreatedMerchant;
  let pub: string;
  let priv: string;
  let enc: string;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t);
    ({ publicKey: pub, privateKey: priv, encryptionKey: enc } = m.keys.test);
  });
  afterAll(async () => {
    await t.close();
  });

  const createLink = (body: unknown) => request(t.baseUrl, 'POST', '/checkout/links/create', { apiKey: priv, body });
  const validLink = { Name: 'Gym', Description: 'Monthly access', PaymentType: 'SC', Currency: 'NGN', AuthOption: 'AUTH', Amount: '5000' };

  describe('unknown properties are ignored', () => {
    it('issue 11 point 3: link create and edit ignore properties they do not know', async () => {
      const res = await createLink({ ...validLink, Colour: 'red', metadata: { a: 1 }, tags: ['x'] });
      expect(res.status).toBe(200);
      expect(res.body.data.paymentLink).toMatchObject({ name: 'Gym', amount: 5000 });
      expect(res.body.data.paymentLink).not.toHaveProperty('Colour');
      const id = res.body.data.paymentLink.id;
      const edit = await request(t.baseUrl, 'PATCH', `/checkout/links/${id}/edit`, {
        apiKey: priv,
        body: { Name: 'Gym 2', Description: 'd', PaymentType: 'SC', Colour: 'blue' },
      });
      expect(edit.status).toBe(200);
      expect(edit.body.data.paymentLink.name).toBe('Gym 2');
    });

    it('issue 11 point 3: every encrypted plaintext, at every level, ignores unknown properties', async () => {
      const reference = nextRef();
      const created = await postEncrypted(t.baseUrl, '/checkout/order/create', pub, enc, {
        ...orderPlaintext(reference, { RedirectUrl: 'https://merchant.test/done', channel: 'web' }),
        customer: { firstname: 'Ada', lastname: 'Obi', middlename: 'N', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
        order: { amount: 1000, reference, description: 'Two tickets', currency: 'NGN', tip: 5 },
        extra: 1,
        paymentMeta: { ipAddress: '203.0.113.7', userAgent: 'legacy/1.0' },
      });
      expect(created.status).toBe(200);
      expect(created.body.data.order).toMatchObject({ reference, amount: 1000 });

      const fee = await postEncrypted(t.baseUrl, '/checkout/order/fee', pub, enc, { amount: 1000, paymentOption: 'C', merchantId: 9 });
      expect(fee.body).toMatchObject({ statusCode: '00', data: { fee: 15 } });
      const status = await postEncrypted(t.baseUrl, '/checkout/order/status', pub, enc, { reference, transactionType: 'card' });
      expect(status.body).toMatchObject({ status_code: '00', data: { order_reference: reference } });
      const track = await postEncrypted(t.baseUrl, '/checkout/order/event/track', pub, enc, {
        orderReference: reference,
        event: 'checkout.viewed',
        source: 'sdk',
      });
      expect(track.body).toEqual({ data: null, status: 'success', statusCode: '00', message: 'Event logged successfully' });
      const verify = await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: priv, body: { reference, includeHistory: true } });
      expect(verify.body).toMatchObject({ statusCode: '00', data: { orderReference: reference } });

      const pay = await postEncrypted(t.baseUrl, '/checkout/order/pay', pub, enc, {
        reference,
        paymentOption: 'C',
        country: 'NG',
        deviceId: 'abc',
        card: {
          cardNumber: '4111111111111111',
          expiryMonth: '12',
          expiryYear: '30',
          cvv: '123',
          nameOnCard: 'ADA OBI',
          billingAddress: { ...billing, line2: 'Floor 3' },
        },
      });
      expect(pay.status).toBe(200);
      expect(pay.body.statusCode).toBe('02');
    });
  });

  describe('null counts as absent', () => {
    it('issue 11 point 3: a null beside the same field in another casing is not a duplicate, and optional nulls are absent', async () => {
      const res = await createLink({ ...validLink, name: null, Mobile: null, Limit: null, Website: null, BackgroundImage: null });
      expect(res.status).toBe(200);
      expect(res.body.data.paymentLink).toMatchObject({ name: 'Gym', limit: null });
    });

    it('issue 11 point 3: a required field sent as null is reported as missing', async () => {
      const res = await createLink({ ...validLink, Description: null });
      expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Description field is required.' });
      const order = await postEncrypted(t.baseUrl, '/checkout/order/create', pub, enc, { ...orderPlaintext(nextRef()), payment: null });
      expect(order.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Payment field is required.' });
    });

    it('issue 11 point 3: null optional objects and fields in plaintexts are absent', async () => {
      const reference = nextRef();
      const res = await postEncrypted(t.baseUrl, '/checkout/order/create', pub, enc, {
        ...orderPlaintext(reference, { RedirectUrl: 'https://merchant.test/done', paymentLinkId: null, frequencyId: null, numberOfPayments: null }),
        paymentMeta: null,
      });
      expect(res.status).toBe(200);
      const fee = await postEncrypted(t.baseUrl, '/checkout/order/fee', pub, enc, { amount: 100, paymentOption: 'C', currency: null });
      expect(fee.body.data).toMatchObject({ fee: 1.5, paymentOption: 'C' });
      const track = await postEncrypted(t.baseUrl, '/checkout/order/event/track', pub, enc, {
        orderReference: reference,
        event: 'x',
        description: null,
        metadata: null,
      });
      expect(track.body.statusCode).toBe('00');
    });
  });

  describe('legacy field names in link bodies', () => {
    it('issue 11 point 3: eventname is the Name and paymentmethod the PaymentType, in any casing', async () => {
      const res = await createLink({ eventName: 'Concert', Description: 'Tickets', PaymentMethod: 'mc', AuthOption: 'NOAUTH' });
      expect(res.status).toBe(200);
      expect(res.body.data.paymentLink).toMatchObject({ name: 'Concert', paymentLinkCode: 'MC' });
      const edit = await request(t.baseUrl, 'PATCH', `/checkout/links/${res.body.data.paymentLink.id}/edit`, {
        apiKey: priv,
        body: { eventname: 'Concert (late)', description: 'Tickets', paymentmethod: 'SC' },
      });
      expect(edit.body.data.paymentLink).toMatchObject({ name: 'Concert (late)', paymentLinkCode: 'SC' });
    });

    it('issue 11 point 3: a name and its legacy alias together are refused, not guessed', async () => {
      const res = await createLink({ ...validLink, eventname: 'Other' });
      expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Name field is given more than once.' });
    });

    it('issue 11 point 3: edit accepts the id legacy clients send (null, or the link id), the path names the link', async () => {
      const link = (await createLink(validLink)).body.data.paymentLink;
      for (const id of [null, link.id, String(link.id)]) {
        const res = await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/edit`, {
          apiKey: priv,
          body: { id, Name: `Gym ${id}`, Description: 'd', PaymentType: 'SC' },
        });
        expect(res.status).toBe(200);
        expect(res.body.data.paymentLink).toMatchObject({ id: link.id, name: `Gym ${id}` });
      }
    });
  });

  describe('/payment/order/<op> is /checkout/order/<op>', () => {
    it('issue 11 point 3: every order endpoint answers under /payment as under /checkout', async () => {
      const reference = nextRef();
      const created = await postEncrypted(t.baseUrl, '/payment/order/create', pub, enc, orderPlaintext(reference));
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ statusCode: '01', data: { order: { reference } } });
      const fee = await postEncrypted(t.baseUrl, '/payment/order/fee', pub, enc, { amount: 1000, paymentOption: 'C' });
      expect(fee.body).toEqual((await postEncrypted(t.baseUrl, '/checkout/order/fee', pub, enc, { amount: 1000, paymentOption: 'C' })).body);
      const status = await postEncrypted(t.baseUrl, '/payment/order/status', pub, enc, { reference });
      expect(status.body).toMatchObject({ status_code: '00', data: { order_reference: reference } });
      const track = await postEncrypted(t.baseUrl, '/payment/order/event/track', pub, enc, { orderReference: reference, event: 'checkout.viewed' });
      expect(track.body.statusCode).toBe('00');
      const verify = await request(t.baseUrl, 'POST', '/payment/order/verify', { apiKey: priv, body: { reference } });
      expect(verify.body).toEqual((await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: priv, body: { reference } })).body);
      const pay = await postEncrypted(t.baseUrl, '/payment/order/pay', pub, enc, {
        reference,
        paymentOption: 'C',
        country: 'NG',
        card: { cardNumber: '4111111111111111', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
      });
      expect(pay.body).toMatchObject({ statusCode: '02', message: 'pending-authenticaion' });
    });

    it('issue 11 point 3: the alias has the same authentication, errors and key rules', async () => {
      expect((await request(t.baseUrl, 'POST', '/payment/order/status', { body: { data: 'x' } })).status).toBe(401);
      const noData = await request(t.baseUrl, 'POST', '/payment/order/status', { apiKey: pub, body: {} });
      expect(noData.body).toEqual({
        status: 'failed',
        statusCode: '400',
        message: 'Unable to find the encrypted data, please encrypt your payload and try again',
      });
      expect((await request(t.baseUrl, 'POST', '/payment/order/verify', { apiKey: pub, body: { reference: 'x' } })).status).toBe(403);
      expect((await request(t.baseUrl, 'POST', '/payment/links/create', { apiKey: pub, body: validLink })).status).toBe(404);
    });
  });

  describe('recurring payment cancel', () => {
    let reference: string;
    beforeAll(async () => {
      const orderRef = nextRef();
      await postEncrypted(
        t.baseUrl,
        '/checkout/order/create',
        pub,
        enc,
        orderPlaintext(orderRef, { RedirectUrl: 'https://merchant.test/done', frequencyId: 2, numberOfPayments: 3 }),
      );
      const pay = await postEncrypted(t.baseUrl, '/checkout/order/pay', pub, enc, {
        reference: orderRef,
        paymentOption: 'C',
        country: 'NG',
        card: { cardNumber: '4111111111111111', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing },
      });
      await fetch(pay.body.data.paymentDetail.redirectUrl, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'otp=123456',
      });
      const verify = await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: priv, body: { reference: orderRef } });
      expect(verify.body.data.statusId).toBe(5);
      reference = verify.body.data.recurringPaymentReference;
      expect(reference).toEqual(expect.any(String));
    });

    const cancel = (ref: string, apiKey = priv, headers: Record<string, string> = {}) =>
      request(t.baseUrl, 'PATCH', `/checkout/links/recurringpayment/${encodeURIComponent(ref)}/cancel`, { apiKey, headers });
    const state = async (ref: string) => (await t.service.runtime.ctx.orm.em.fork().findOneOrFail(RecurringPayment, { reference: ref })).state;

    it('issue 11 point 3: refuses the public key and changes nothing', async () => {
      const res = await cancel(reference, pub);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ status: 'failed', statusCode: '403', message: 'This operation requires the private key.' });
      expect(await state(reference)).toBe('active');
    });

    it('issue 11 point 3: cancels with the private key, and cancelling again answers the same', async () => {
      const res = await cancel(reference);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: { reference, state: 'cancelled', cancelled: true },
        status: 'success',
        statusCode: '00',
        message: 'Recurring payment cancelled successfully',
      });
      expect(await state(reference)).toBe('cancelled');
      expect((await cancel(reference)).body).toEqual(res.body);
    });

    it("issue 11 point 3: an unknown reference, or another merchant's, is 404 code 13", async () => {
      const other = await createTestMerchant(t);
      for (const [ref, key] of [
        ['RP-unknown', priv],
        [reference, other.keys.test.privateKey],
        [reference, m.keys.live.privateKey],
      ] as const) {
        const res = await cancel(ref, key);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ status: 'failed', status_code: '13', message: 'recurring payment not found' });
      }
    });
  });
});
