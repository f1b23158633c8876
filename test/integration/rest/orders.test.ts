import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { encryptPayload } from '../../support/payload-client';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?$/;
const DECRYPTION_FAILED = {
  status: 'failed',
  statusCode: '400',
  message: 'Unable to decrypt the payload, please encrypt it with your encryption key and try again',
};

let refCounter = 0;
const nextRef = () => `ORD-${process.pid}-${Date.now()}-${++refCounter}`;

export function orderPlaintext(reference: string, overrides: Record<string, unknown> = {}) {
  return {
    customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
    order: { amount: 1000, reference, description: 'Two tickets', currency: 'NGN' },
    payment: { RedirectUrl: 'https://merchant.test/done' },
    ...overrides,
  };
}

describe('REST: orders', () => {
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

  const createOrder = (plaintext: unknown, apiKey = pub, encryptionKey = enc) =>
    postEncrypted(t.baseUrl, '/checkout/order/create', apiKey, encryptionKey, plaintext);
  const verify = (reference: unknown, apiKey = priv) => request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey, body: { reference } });

  describe('order/create', () => {
    it('creates an Initiated order and answers with the documented resource', async () => {
      const reference = nextRef();
      const res = await createOrder(orderPlaintext(reference, { paymentMeta: { ipAddress: '203.0.113.7' } }));
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        data: {
          order: {
            reference,
            processorReference: expect.stringMatching(/^PGW[A-Z2-9]{20}$/),
            orderPaymentReference: null,
            amount: 1000,
            fee: 15,
            feeRate: 0.015,
            statusId: 1,
            status: 'Initiated',
            currency: 'NGN',
            narration: 'Two tickets',
            paymentLinkId: null,
            recurringPaymentId: null,
            paymentLinkReference: null,
            recurringPaymentReference: null,
          },
          subsidiary: { ...m.subsidiary, customization: [] },
          customer: { email: 'ada@example.test', firstName: 'Ada', lastName: 'Obi', mobile: '+2348012345678', country: 'NG' },
          payment: { code: null, source: null, selectedOption: null, accountNumber: null, bankProviderName: null },
          otherPaymentOptions: [
            { code: 'C', name: 'Card Payment', currency: 'NGN' },
            { code: 'PAYPAL', name: 'PayPal', currency: 'NGN' },
          ],
          savedCards: [],
          subsidiaryOrderSummary: {
            orderName: 'Two tickets',
            totalAmount: 1000,
            reference,
            currency: 'NGN',
            orderItems: [{ name: 'Two tickets', amount: 1000 }],
          },
        },
        status: 'success',
        statusCode: '01',
        message: 'Created order successfully',
      });
    });

    it('reads plaintext property names case-insensitively', async () => {
      const reference = nextRef();
      const res = await createOrder({
        Customer: { FirstName: 'Ada', LASTNAME: 'Obi', Mobile: '+2348012345678', Country: 'ng', Email: 'ADA@example.test' },
        ORDER: { Amount: '250.50', Reference: reference, Description: 'x', Currency: 'ngn' },
        payment: { redirecturl: 'https://merchant.test/done' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data.order).toMatchObject({ reference, amount: 250.5, currency: 'NGN' });
      expect(res.body.data.customer.email).toBe('ada@example.test');
    });

    it('refuses a duplicate reference with VAL400 and changes nothing', async () => {
      const reference = nextRef();
      expect((await createOrder(orderPlaintext(reference))).status).toBe(200);
      const again = await createOrder(orderPlaintext(reference, { order: { amount: 999, reference, description: 'changed', currency: 'NGN' } }));
      expect(again.status).toBe(400);
      expect(again.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'An order with this Reference already exists.' });
      const details = await verify(reference);
      expect(details.body.data.totalAmountCharged).toBe(1000);
      expect(details.body.data.narration).toBe('Two tickets');
    });

    it('lets the same reference be used by another merchant and in the live environment', async () => {
      const reference = nextRef();
      const other = await createTestMerchant(t);
      expect((await createOrder(orderPlaintext(reference))).status).toBe(200);
      expect((await createOrder(orderPlaintext(reference), other.keys.test.publicKey, other.keys.test.encryptionKey)).status).toBe(200);
      expect((await createOrder(orderPlaintext(reference), m.keys.live.publicKey, m.keys.live.encryptionKey)).status).toBe(200);
    });

    it.each([
      [{ customer: undefined }, 400, 'VAL400', 'The Customer field is required.'],
      [{ customer: { lastname: 'O', mobile: '+234801', country: 'NG', email: 'a@b.test' } }, 400, 'VAL400', 'The Firstname field is required.'],
      [
        { customer: { firstname: 'A', lastname: 'O', mobile: '+2348012345678', country: 'NG', email: 'nope' } },
        400,
        'VAL400',
        'The Email field is not a valid e-mail address.',
      ],
      [
        { customer: { firstname: 'A', lastname: 'O', mobile: '+2348012345678', country: 'KP', email: 'a@b.test' } },
        400,
        '100',
        'Customer country is currently not supported',
      ],
      [{ order: { amount: 10, reference: 'X', description: 'd', currency: 'JPY' } }, 400, 'VAL400', 'Currency is currently not supported.'],
      [{ order: { amount: 0, reference: 'X', description: 'd', currency: 'NGN' } }, 400, 'VAL400', 'The Amount field must be greater than zero.'],
      [{ order: { amount: -1, reference: 'X', description: 'd', currency: 'NGN' } }, 400, 'VAL400', 'The Amount field must be greater than zero.'],
      [{ order: { amount: 1e21, reference: 'X', description: 'd', currency: 'NGN' } }, 400, 'VAL400', 'The Amount field must be at most 999999999999.99.'],
      [{ order: { amount: true, reference: 'X', description: 'd', currency: 'NGN' } }, 400, 'VAL400', 'The Amount field must be a number.'],
      [{ order: { amount: 10, description: 'd', currency: 'NGN' } }, 400, 'VAL400', 'The Reference field is required.'],
      [{ payment: {} }, 400, 'VAL400', 'The RedirectUrl field is required.'],
      [
        { payment: { RedirectUrl: 'https://m.test', frequencyId: 2, numberOfPayments: 3 } },
        400,
        'VAL400',
        'The FrequencyId field is only for orders of subscription links (PaymentType SUB).',
      ],
      [
        { payment: { RedirectUrl: 'https://m.test', numberOfPayments: 3 } },
        400,
        'VAL400',
        'The NumberOfPayments field is only for orders of subscription links (PaymentType SUB).',
      ],
      [{ payment: { RedirectUrl: 'https://m.test', paymentLinkId: 999999999 } }, 404, '02', 'payment link not found'],
      [{ paymentMeta: { ipAddress: 'not-an-ip' } }, 400, 'VAL400', 'The IpAddress field is not a valid IP address.'],
    ])('refuses %j', async (overrides, status, code, message) => {
      const reference = nextRef();
      const res = await createOrder(orderPlaintext(reference, overrides));
      expect(res.status).toBe(status);
      const key = code === '100' || code === '13' ? 'status_code' : 'statusCode';
      expect(res.body).toEqual({ status: 'failed', [key]: code, message });
      expect((await verify(reference)).status).toBe(404);
    });

    it('creates an order from an active payment link and carries its id and reference', async () => {
      const link = (
        await request(t.baseUrl, 'POST', '/checkout/links/create', {
          apiKey: priv,
          body: { Name: 'Tickets', Description: 'Concert', PaymentType: 'MC', AuthOption: 'AUTH', Amount: '1000' },
        })
      ).body.data.paymentLink;
      const reference = nextRef();
      const res = await createOrder(orderPlaintext(reference, { payment: { RedirectUrl: 'https://m.test', paymentLinkId: link.id } }));
      expect(res.body.data.order).toMatchObject({ paymentLinkId: link.id, paymentLinkReference: link.reference });
      const wrongAmount = await createOrder(
        orderPlaintext(nextRef(), {
          order: { amount: 5, reference: nextRef(), currency: 'NGN' },
          payment: { RedirectUrl: 'https://m.test', paymentLinkId: link.id },
        }),
      );
      expect(wrongAmount.body).toEqual({
        status: 'failed',
        statusCode: 'VAL400',
        message: 'The Amount field must be 1000.00, the amount of the payment link.',
      });
      await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/status/disable`, { apiKey: priv });
      const inactive = await createOrder(orderPlaintext(nextRef(), { payment: { RedirectUrl: 'https://m.test', paymentLinkId: link.id } }));
      expect(inactive.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The payment link is not active.' });
    });

    /** A MC link of 1000 NGN, and an order create on it for an amount. */
    async function linkTakingOrders(name: string, description: string) {
      const link = (
        await request(t.baseUrl, 'POST', '/checkout/links/create', {
          apiKey: priv,
          body: { Name: name, Description: description, PaymentType: 'MC', AuthOption: 'AUTH', Amount: '1000' },
        })
      ).body.data.paymentLink;
      const onLink = (amount: number) =>
        createOrder(
          orderPlaintext(nextRef(), {
            order: { amount, reference: nextRef(), currency: 'NGN' },
            payment: { RedirectUrl: 'https://m.test', paymentLinkId: link.id },
          }),
        );
      return { link, onLink };
    }

    it('checks an order against the link as it is now, not as an earlier create read it: an edited amount takes effect at once', async () => {
      const { link, onLink } = await linkTakingOrders('Edited', 'Price change');
      expect((await onLink(1000)).body.statusCode).toBe('01');
      const edited = await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/edit`, {
        apiKey: priv,
        body: { Name: 'Edited', Description: 'Price change', PaymentType: 'MC', Amount: '1200' },
      });
      expect(edited.status).toBe(200);
      expect((await onLink(1000)).body).toEqual({
        status: 'failed',
        statusCode: 'VAL400',
        message: 'The Amount field must be 1200.00, the amount of the payment link.',
      });
      const repriced = await onLink(1200);
      expect(repriced.body.statusCode).toBe('01');
      expect(repriced.body.data.order).toMatchObject({ paymentLinkId: link.id, amount: 1200 });
    });

    it('refuses an order only by the link as it is now: a link activated again, or repriced to the amount asked, takes it', async () => {
      const { link, onLink } = await linkTakingOrders('Paused', 'On and off');
      expect((await onLink(1000)).body.statusCode).toBe('01');
      await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/status/disable`, { apiKey: priv });
      expect((await onLink(1000)).body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The payment link is not active.' });
      await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/status/activate`, { apiKey: priv });
      expect((await onLink(1000)).body.statusCode).toBe('01');
      const edited = await request(t.baseUrl, 'PATCH', `/checkout/links/${link.id}/edit`, {
        apiKey: priv,
        body: { Name: 'Paused', Description: 'On and off', PaymentType: 'MC', Amount: '1200' },
      });
      expect(edited.status).toBe(200);
      expect((await onLink(1200)).body.statusCode).toBe('01');
    });
  });

  describe('encrypted bodies', () => {
    it('answers a body without data with the documented 400', async () => {
      for (const body of [{}, { data: '' }, { data: 5 }, [], 'text', null]) {
        const res = await request(t.baseUrl, 'POST', '/checkout/order/create', { apiKey: pub, body });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          status: 'failed',
          statusCode: '400',
          message: 'Unable to find the encrypted data, please encrypt your payload and try again',
        });
      }
      const empty = await request(t.baseUrl, 'POST', '/checkout/order/status', { apiKey: pub, rawBody: '', headers: { 'content-type': 'application/json' } });
      expect(empty.body).toEqual({
        status: 'failed',
        statusCode: '400',
        message: 'Unable to find the encrypted data, please encrypt your payload and try again',
      });
    });

    it('answers every kind of decryption failure with one identical body and status', async () => {
      const good = encryptPayload({ reference: 'x' }, enc);
      const bytes = Buffer.from(good, 'base64');
      const tampered = Buffer.from(bytes);
      tampered[10] ^= 0x01;
      const other = await createTestMerchant(t);
      const variants = [
        tampered.toString('base64'), // tampered
        bytes.subarray(0, bytes.length - 1).toString('base64'), // truncated
        encryptPayload({ reference: 'x' }, other.keys.test.encryptionKey), // wrong key
        encryptPayload({ reference: 'x' }, m.keys.live.encryptionKey), // other environment's key
        encryptPayload('not json at all', enc), // not JSON
        encryptPayload('[1,2,3]', enc), // JSON, not an object
        '%%% not base64 %%%',
        Buffer.concat([bytes, bytes.subarray(0, 10)]).toString('base64'), // wrong length
      ];
      const answers = [];
      for (const data of variants) {
        const res = await request(t.baseUrl, 'POST', '/checkout/order/status', { apiKey: pub, body: { data } });
        answers.push({ status: res.status, text: res.text });
      }
      for (const a of answers) expect(a).toEqual({ status: 400, text: JSON.stringify(DECRYPTION_FAILED) });
    });

    it('decrypts multi-block payloads', async () => {
      const reference = nextRef();
      const long = 'A long description. '.repeat(60); // > 1 RSA block
      expect(
        Buffer.from(encryptPayload(orderPlaintext(reference, { order: { amount: 10, reference, description: long, currency: 'NGN' } }), enc), 'base64').length,
      ).toBeGreaterThan(256);
      const res = await createOrder(orderPlaintext(reference, { order: { amount: 10, reference, description: long, currency: 'NGN' } }));
      expect(res.status).toBe(200);
      expect(res.body.data.order.narration).toBe(long.trim());
    });
  });

  describe('order/fee', () => {
    const fee = (plaintext: unknown) => postEncrypted(t.baseUrl, '/checkout/order/fee', pub, enc, plaintext);

    it('quotes card fees exactly, borne by the merchant by default', async () => {
      const res = await fee({ amount: 1000, paymentOption: 'C' });
      expect(res.body).toEqual({
        data: { fee: 15, amount: 1000, subsidiaryFee: 15, customerFee: 0, totalChargedAmount: 1000, paymentOption: 'C' },
        status: 'success',
        statusCode: '00',
        message: 'Operation successful',
      });
      // 1.5% capped at 2,000 NGN.
      expect((await fee({ amount: 1000000, paymentOption: 'C', currency: 'NGN' })).body.data.fee).toBe(2000);
      // Exact decimals: 0.1 + 0.2 style sums never drift.
      expect((await fee({ amount: 0.3, paymentOption: 'C', currency: 'USD' })).body.data.fee).toBe(0.01);
      expect((await fee({ amount: 100.1, paymentOption: 'PAYPAL', currency: 'USD' })).body.data.fee).toBe(4.7);
    });

    it('adds the fee to the total when the customer bears it', async () => {
      const payer = await createTestMerchant(t);
      await t.service.runtime.ctx.orm.em
        .getConnection()
        .execute(`update app_environment set fee_bearer = 'customer' where subsidiary_id = ?`, [payer.subsidiary.id]);
      const res = await postEncrypted(t.baseUrl, '/checkout/order/fee', payer.keys.test.publicKey, payer.keys.test.encryptionKey, {
        amount: 2500.5,
        paymentOption: 'C',
      });
      expect(res.body.data).toEqual({ fee: 37.51, amount: 2500.5, subsidiaryFee: 0, customerFee: 37.51, totalChargedAmount: 2538.01, paymentOption: 'C' });
    });

    it.each([
      [{ amount: 100 }, 'payment option is required!'],
      [{ amount: 100, paymentOption: '' }, 'payment option is required!'],
      [{ amount: 100, paymentOption: 'BTC' }, 'PaymentOption is currently not supported.'],
      [{ amount: 100, paymentOption: 'C', currency: 'XYZ' }, 'Currency is currently not supported.'],
      [{ paymentOption: 'C' }, 'The Amount field is required.'],
      [{ amount: -3, paymentOption: 'C' }, 'The Amount field must be greater than zero.'],
    ])('refuses %j', async (plaintext, message) => {
      const res = await fee(plaintext);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message });
    });
  });

  describe('order/status', () => {
    it('answers Envelope B with the snake_case record', async () => {
      const reference = nextRef();
      await createOrder(orderPlaintext(reference));
      const res = await postEncrypted(t.baseUrl, '/checkout/order/status', pub, enc, { reference });
      expect(res.status).toBe(200);
      expect(Object.keys(res.body)).toEqual(['is_final_status', 'requery_needed', 'requery_type', 'data', 'status', 'status_code', 'message']);
      expect(res.body).toMatchObject({
        is_final_status: false,
        requery_needed: true,
        requery_type: 'status',
        status: 'success',
        status_code: '00',
        message: 'Order Status fetched successfully',
      });
      expect(res.body.data).toEqual({
        payment_reference: expect.stringMatching(/^PAY/),
        order_reference: reference,
        product_id: 0,
        subsidiary_id: m.subsidiary.id,
        wallet_id: expect.any(Number),
        customer_id: expect.any(Number),
        total_charged_amount: 1000,
        payment_status: 1,
        currency_id: 566,
        fee: 15,
        subsidiary_fee: 15,
        customer_fee: 0,
        payment_type: '',
        payment_response_code: '01',
        payment_response_message: 'Created order successfully',
        provider_response_date: null,
        date_payment_confirmed: null,
        narration: 'Two tickets',
        remarks: '',
        parent_transaction_id: null,
        id: expect.any(Number),
        created_by: m.subsidiary.id,
        updated_by: m.subsidiary.id,
        deleted_by: null,
        date_created: expect.stringMatching(TIMESTAMP),
        date_updated: expect.stringMatching(TIMESTAMP),
        date_deleted: null,
      });
    });

    it('answers 404 with status_code 13 for an unknown order, or one of another tenant', async () => {
      const reference = nextRef();
      await createOrder(orderPlaintext(reference));
      for (const [key, encKey, ref] of [
        [pub, enc, 'does-not-exist'],
        [m.keys.live.publicKey, m.keys.live.encryptionKey, reference],
      ] as const) {
        const res = await postEncrypted(t.baseUrl, '/checkout/order/status', key, encKey, { reference: ref });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ status: 'failed', status_code: '13', message: 'Order not found at the moment' });
      }
    });
  });

  describe('order/verify', () => {
    it('returns the full Order details with the private key', async () => {
      const reference = nextRef();
      await createOrder(orderPlaintext(reference));
      const res = await verify(reference);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'success', statusCode: '00', message: 'Order details fetched successfully' });
      expect(res.body.data).toEqual({
        orderReference: reference,
        paymentReference: expect.stringMatching(/^PAY/),
        productName: 'Two tickets',
        totalAmountCharged: 1000,
        statusId: 1,
        status: 'Initiated',
        paymentMethod: '',
        paymentResponseCode: '01',
        paymentResponseMessage: 'Created order successfully',
        narration: 'Two tickets',
        remarks: '',
        currencyId: 566,
        paymentLinkId: null,
        paymentLinkReference: null,
        recurringPaymentId: null,
        recurringPaymentReference: null,
        currencyName: 'NGN',
        fee: 15,
        feeRate: 0.015,
        subsidiaryFee: 15,
        customerFee: 0,
        dateCreated: expect.stringMatching(TIMESTAMP),
        dateUpdated: expect.stringMatching(TIMESTAMP),
        datePaymentConfirmed: null,
        orderPayments: [],
        customer: {
          customerId: expect.stringMatching(/^\d+$/),
          firstName: 'Ada',
          lastName: 'Obi',
          emailAddress: 'ada@example.test',
          countryShortName: 'NG',
          customerGroup: null,
          countryId: 566,
          globalStatusId: 1,
          globalStatus: 'Active',
          mobileNumber: '+2348012345678',
          isBlacklisted: false,
          reasonBlacklisted: null,
          dateCreated: expect.stringMatching(TIMESTAMP),
          dateUpdated: expect.stringMatching(TIMESTAMP),
        },
        cardDetails: [],
        paymentLink: null,
      });
    });

    it('refuses the public key', async () => {
      const res = await verify('anything', pub);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ status: 'failed', statusCode: '403', message: 'This operation requires the private key.' });
    });

    it('answers 404 status_code 13 for an unknown reference and VAL400 without one', async () => {
      const res = await verify('nope');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ status: 'failed', status_code: '13', message: 'Order not found at the moment' });
      const missing = await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: priv, body: {} });
      expect(missing.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Reference field is required.' });
    });
  });

  describe('order/event/track', () => {
    const track = (plaintext: unknown) => postEncrypted(t.baseUrl, '/checkout/order/event/track', pub, enc, plaintext);

    it('records a timeline entry and answers data null', async () => {
      const reference = nextRef();
      await createOrder(orderPlaintext(reference));
      const res = await track({ orderReference: reference, event: 'checkout.viewed', description: 'Customer opened checkout', metadata: { page: 1 } });
      expect(res.body).toEqual({ data: null, status: 'success', statusCode: '00', message: 'Event logged successfully' });
      const entries = await t.service.runtime.ctx.services.timeline.list(await t.service.runtime.ctx.services.auth.authenticate(pub), reference);
      expect(entries.map((e) => [e.event, e.source, e.description])).toEqual([
        ['order.created', 'system', 'Order created'],
        ['checkout.viewed', 'merchant', 'Customer opened checkout'],
      ]);
    });

    it('refuses a NUL character hidden in the metadata, and records nothing', async () => {
      const reference = nextRef();
      await createOrder(orderPlaintext(reference));
      const res = await track({ orderReference: reference, event: 'x', metadata: { note: 'a\u0000b' } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The request contains a character that is not allowed (NUL).' });
      const entries = await t.service.runtime.ctx.services.timeline.list(await t.service.runtime.ctx.services.auth.authenticate(pub), reference);
      expect(entries.map((e) => e.event)).toEqual(['order.created']);
    });

    it('refuses half of a surrogate pair hidden in the metadata, and records nothing', async () => {
      const reference = nextRef();
      await createOrder(orderPlaintext(reference));
      const res = await track({ orderReference: reference, event: 'x', metadata: { note: ['ok', 'a\udfffb'] } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        status: 'failed',
        statusCode: 'VAL400',
        message: 'The request contains a character that is not allowed (an unpaired surrogate).',
      });
      const entries = await t.service.runtime.ctx.services.timeline.list(await t.service.runtime.ctx.services.auth.authenticate(pub), reference);
      expect(entries.map((e) => e.event)).toEqual(['order.created']);
    });

    it.each([
      [{ event: 'x' }, 400, { status: 'failed', statusCode: 'VAL400', message: 'The OrderReference field is required.' }],
      [{ orderReference: 'nope', event: 'x' }, 404, { status: 'failed', status_code: '13', message: 'Order not found at the moment' }],
      [{ orderReference: 'nope', event: 'x\u0000' }, 400, { status: 'failed', statusCode: 'VAL400', message: 'The Event field is not valid.' }],
    ])('refuses %j', async (plaintext, status, body) => {
      const res = await track(plaintext);
      expect(res.status).toBe(status);
      expect(res.body).toEqual(body);
    });
  });
  describe('order/pay without a billing address (legacy clients)', () => {
    const pay = (plaintext: Record<string, unknown>) => postEncrypted(t.baseUrl, '/checkout/order/pay', pub, enc, plaintext);
    const cardWithout = { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123' };
    const paypalWithout = { fullName: 'Ada Obi', mobile: '+2348012345678', house: '4' };

    it.each([
      ['card, no billingAddress', { paymentOption: 'C', card: cardWithout }],
      ['card, billingAddress null', { paymentOption: 'C', card: { ...cardWithout, billingAddress: null } }],
      [
        'card, every part of billingAddress null',
        { paymentOption: 'C', card: { ...cardWithout, BillingAddress: { street: null, city: null, state: null, country: null, zipcode: null } } },
      ],
      ['PayPal, no billingAddress', { paymentOption: 'PAYPAL', paypal: paypalWithout }],
      ['PayPal, billingAddress null', { paymentOption: 'PAYPAL', paypal: { ...paypalWithout, billingAddress: null } }],
    ])('accepts %s', async (_label, body) => {
      const reference = nextRef();
      expect((await createOrder(orderPlaintext(reference))).body.statusCode).toBe('01');
      const res = await pay({ reference, country: 'NG', ...body });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'success', statusCode: '02', message: 'pending-authenticaion' });
      expect((await verify(reference)).body.data.statusId).toBe(2);
    });

    it('refuses a payer country the service does not serve with code 100, worded exactly as the legacy interface', async () => {
      const reference = nextRef();
      await createOrder(orderPlaintext(reference));
      const res = await pay({ reference, country: 'KP', paymentOption: 'C', card: cardWithout });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ status: 'failed', status_code: '100', message: 'Customer country is currently not supported' });
      expect((await verify(reference)).body.data.statusId).toBe(1);
    });

    it('still refuses a billing address given in part', async () => {
      const reference = nextRef();
      await createOrder(orderPlaintext(reference));
      const res = await pay({ reference, country: 'NG', paymentOption: 'C', card: { ...cardWithout, billingAddress: { street: '1 Marina', country: 'NG' } } });
      expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The City field is required.' });
      expect((await verify(reference)).body.data.statusId).toBe(1);
    });
  });
});
