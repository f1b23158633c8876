import Decimal from 'decimal.js';
import { startTestService, type TestService } from '../../support/service';
import { graphql, postEncrypted, request } from '../../support/http';
import { encryptOneBlock } from '../../support/legacy-encryption';
import { httpFrom } from '../protection/raw-http';
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

/** Exactly the headers Java's java.net.http.HttpClient (the official Java SDK's client) adds to a request by default. */
const JAVA_HTTP_CLIENT = { connection: 'Upgrade, HTTP2-Settings', 'http2-settings': 'AAEAAEAAAAIAAAABAAMAAABkAAQBAAAAAAUAAEAA', upgrade: 'h2c' };

/** A one-block 4096-bit ciphertext is exactly 512 bytes: what deployed clients send. */
const ONE_4096_BIT_BLOCK = 512;

/**
 * What deployed legacy clients send must work unchanged. Each client family has a flow driving
 * the service the way that client does (field names, casing, one-block encryption, h2c, empty
 * strings, fee arithmetic); the narrower rules follow.
 */
describe('REST: deployed legacy clients', () => {
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

  /** An Encrypted endpoint called as deployed clients call it: the plaintext as one block of the merchant's key. */
  const postOneBlock = (path: string, keys: { publicKey: string; encryptionKey: string }, plaintext: object) =>
    request(t.baseUrl, 'POST', path, { apiKey: keys.publicKey, body: { data: encryptOneBlock(plaintext, keys.encryptionKey) } });

  const createLink = (body: unknown) => request(t.baseUrl, 'POST', '/checkout/links/create', { apiKey: priv, body });
  const validLink = { Name: 'Gym', Description: 'Monthly access', PaymentType: 'SC', Currency: 'NGN', AuthOption: 'AUTH', Amount: '5000' };

  describe('a client that sends the Java SDK names (paymentmethod, eventname) in lower case, encrypts one 4096-bit block and asks for h2c', () => {
    let java: CreatedMerchant;
    beforeAll(async () => {
      java = await createTestMerchant(t, { keyBits: 4096 });
    });
    /** A request as java.net.http.HttpClient sends it: HTTP/1.1 with an h2c upgrade offer. */
    const javaPost = (path: string, apiKey: string, body: unknown) =>
      httpFrom(t.baseUrl, '127.0.0.1', 'POST', path, { headers: { ...JAVA_HTTP_CLIENT, 'api-key': apiKey }, body: JSON.stringify(body) });
    const javaEncrypted = (path: string, plaintext: object) => {
      const data = encryptOneBlock(plaintext, java.keys.test.encryptionKey);
      expect(Buffer.from(data, 'base64').length).toBe(ONE_4096_BIT_BLOCK);
      return javaPost(path, java.keys.test.publicKey, { data });
    };

    it('creates, quotes, pays, tracks, queries and verifies an order end to end', async () => {
      const reference = nextRef();
      const order = {
        customer: { firstname: 'Chinedu', lastname: 'Okafor', mobile: '+2348031234567', country: 'NG', email: 'chinedu.okafor@example.test' },
        order: { amount: 2500, reference, description: 'Order 1042 from the Java storefront: 2 items', currency: 'NGN' },
        payment: { redirecturl: 'https://shop.merchant.test/java/checkout/return?session=7f3a9c' },
      };
      // Too long for one block of a 2048-bit key: only the 4096-bit key lets this client work.
      expect(Buffer.byteLength(JSON.stringify(order))).toBeGreaterThan(245);
      const created = await javaEncrypted('/checkout/order/create', order);
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ statusCode: '01', data: { order: { reference, amount: 2500, status: 'Initiated' } } });

      const fee = await javaEncrypted('/checkout/order/fee', { amount: 2500, paymentmethod: 'C', currency: 'NGN' });
      expect(fee.body).toMatchObject({ statusCode: '00', data: { fee: 37.5, amount: 2500, paymentOption: 'C' } });

      const pay = await javaEncrypted('/checkout/order/pay', {
        reference,
        paymentmethod: 'C',
        country: 'NG',
        card: {
          cardnumber: '5123450000000008',
          expirymonth: '12',
          expiryyear: '30',
          cvv: '123',
          billingaddress: { street: '12 Awolowo Road', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101233' },
        },
      });
      expect(pay.body).toMatchObject({ statusCode: '02', message: 'pending-authenticaion' });
      const otp = await fetch(pay.body.data.paymentDetail.redirectUrl, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'otp=123456',
      });
      expect(otp.headers.get('location')).toBe(`https://shop.merchant.test/java/checkout/return?session=7f3a9c&reference=${reference}&status=successful`);

      const track = await javaEncrypted('/checkout/order/event/track', { orderreference: reference, eventname: 'sdk.payment.returned' });
      expect(track.body).toEqual({ data: null, status: 'success', statusCode: '00', message: 'Event logged successfully' });
      const status = await javaEncrypted('/checkout/order/status', { reference });
      expect(status.body).toMatchObject({ status_code: '00', is_final_status: true, data: { order_reference: reference, payment_status: 5 } });
      const verify = await javaPost('/checkout/order/verify', java.keys.test.privateKey, { reference });
      expect(verify.status).toBe(200);
      expect(verify.body.data).toMatchObject({ orderReference: reference, statusId: 5, status: 'Successful', totalAmountCharged: 2500 });
      expect(verify.headers.upgrade).toBeUndefined();
    });

    const timeline = async (reference: string) =>
      (
        await graphql(
          t.baseUrl,
          `
            query ($reference: String!) {
              orderTimeline(reference: $reference) {
                event
                source
              }
            }
          `,
          { reference },
          { 'api-key': priv },
        )
      ).body.data.orderTimeline as Array<{ event: string; source: string }>;

    it('reads paymentmethod as the payment option of a fee quote and of a payment, in any casing', async () => {
      for (const name of ['paymentmethod', 'paymentMethod', 'PAYMENTMETHOD']) {
        const fee = await postEncrypted(t.baseUrl, '/checkout/order/fee', pub, enc, { amount: 1000, [name]: 'C' });
        expect(fee.body).toMatchObject({ statusCode: '00', data: { fee: 15, paymentOption: 'C' } });
      }
      const reference = nextRef();
      await postEncrypted(t.baseUrl, '/checkout/order/create', pub, enc, orderPlaintext(reference));
      const pay = await postEncrypted(t.baseUrl, '/checkout/order/pay', pub, enc, {
        reference,
        paymentmethod: 'C',
        country: 'NG',
        card: { cardNumber: '4111111111111111', expiryMonth: '12', expiryYear: '30', cvv: '123' },
      });
      expect(pay.body).toMatchObject({ statusCode: '02', message: 'pending-authenticaion' });
    });

    it('reads eventname as the event of a tracked timeline entry', async () => {
      const reference = nextRef();
      await postEncrypted(t.baseUrl, '/checkout/order/create', pub, enc, orderPlaintext(reference));
      const track = await postEncrypted(t.baseUrl, '/checkout/order/event/track', pub, enc, { orderReference: reference, eventname: 'sdk.opened' });
      expect(track.body).toEqual({ data: null, status: 'success', statusCode: '00', message: 'Event logged successfully' });
      expect(await timeline(reference)).toContainEqual(expect.objectContaining({ event: 'sdk.opened' }));
    });

    it('refuses a payment option given under both names rather than guessing', async () => {
      const res = await postEncrypted(t.baseUrl, '/checkout/order/fee', pub, enc, { amount: 1000, paymentOption: 'C', paymentmethod: 'PAYPAL' });
      expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The PaymentOption field is given more than once.' });
    });

    it('does not read eventname or paymentmethod as a link Name or PaymentType', async () => {
      const noName = await createLink({ eventname: 'Concert', Description: 'Tickets', PaymentType: 'MC', AuthOption: 'NOAUTH' });
      expect(noName.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Name field is required.' });
      const noType = await createLink({ Name: 'Concert', Description: 'Tickets', paymentmethod: 'MC', AuthOption: 'NOAUTH' });
      expect(noType.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The PaymentType field is required.' });
    });
  });

  describe('a shop plugin that encrypts one 4096-bit block and checks totalAmountCharged - fee against the order total', () => {
    /** The legacy gateway's own sample: an order of 100 with a fee of 6 that the customer bears. */
    let shop: CreatedMerchant;
    beforeAll(async () => {
      // Made as an operator makes a merchant without saying who bears the fee.
      shop = await t.service.runtime.ctx.services.merchants.createMerchant({
        name: 'Plugin Shop',
        country: 'NG',
        supportEmail: 'shop@plugin.test',
        keyBits: 4096,
      });
      await t.service.runtime.ctx.orm.em
        .getConnection()
        .execute(`insert into fee_rule (subsidiary_id, payment_option, currency, rate, flat) values (?, 'C', 'NGN', '0.06', '0')`, [shop.subsidiary.id]);
    });

    it('quotes a new merchant with the customer bearing the fee: amount 100, fee 6, customer fee 6, total 106', async () => {
      const fee = await postOneBlock('/checkout/order/fee', shop.keys.test, { amount: 100, paymentOption: 'C' });
      expect(fee.body).toEqual({
        data: { fee: 6, amount: 100, subsidiaryFee: 0, customerFee: 6, totalChargedAmount: 106, paymentOption: 'C' },
        status: 'success',
        statusCode: '00',
        message: 'Operation successful',
      });
    });

    it('charges the customer 106 for an order of 100, so that totalAmountCharged - fee is the order total', async () => {
      const { privateKey } = shop.keys.test;
      const reference = nextRef();
      const created = await postOneBlock('/checkout/order/create', shop.keys.test, {
        ...orderPlaintext(reference),
        order: { amount: 100, reference, description: 'One mug', currency: 'NGN' },
      });
      expect(created.body.data.order).toMatchObject({ amount: 100, fee: 6 });
      expect(created.body.data.subsidiaryOrderSummary.totalAmount).toBe(106);
      const pay = await postOneBlock('/checkout/order/pay', shop.keys.test, {
        reference,
        paymentOption: 'C',
        country: 'NG',
        card: { cardNumber: '5123450000000008', expiryMonth: '12', expiryYear: '30', cvv: '123' },
      });
      expect(pay.body.data.orderPayment).toMatchObject({ totalAmount: 106, fee: 6 });
      const otp = await fetch(pay.body.data.paymentDetail.redirectUrl, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'otp=123456',
      });
      expect(otp.status).toBe(303);

      const verified = (await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: privateKey, body: { reference } })).body.data;
      expect(verified).toMatchObject({ statusId: 5, totalAmountCharged: 106, fee: 6, customerFee: 6, subsidiaryFee: 0 });
      // The plugin's check, in exact decimals: the order is paid in full, not put on hold.
      expect(new Decimal(verified.totalAmountCharged).minus(verified.fee).eq(100)).toBe(true);
      const status = await postOneBlock('/checkout/order/status', shop.keys.test, { reference });
      expect(status.body.data).toMatchObject({ total_charged_amount: 106, fee: 6, customer_fee: 6, subsidiary_fee: 0 });
    });
  });

  describe('a client that sends an empty string for every field it leaves out', () => {
    it('creates, quotes and pays an order with mobile, description, currency and billing address sent as ""', async () => {
      const node = await createTestMerchant(t, { keyBits: 4096 });
      const reference = nextRef();
      const created = await postOneBlock('/checkout/order/create', node.keys.test, {
        customer: { firstname: 'Tunde', lastname: 'Bakare', mobile: '', country: 'NG', email: 'tunde@example.test' },
        order: { amount: 4000, reference, description: '', currency: '' },
        payment: { RedirectUrl: 'https://node-shop.test/return', paymentLinkId: '', frequencyId: '', numberOfPayments: '' },
        paymentMeta: { ipAddress: '' },
      });
      expect(created.status).toBe(200);
      expect(created.body.data).toMatchObject({ order: { reference, amount: 4000, currency: 'NGN', narration: '' }, customer: { mobile: '' } });
      const fee = await postOneBlock('/checkout/order/fee', node.keys.test, { amount: 4000, paymentOption: 'C', currency: '' });
      expect(fee.body).toMatchObject({ statusCode: '00', data: { fee: 60 } });
      const pay = await postOneBlock('/checkout/order/pay', node.keys.test, {
        reference,
        paymentOption: 'C',
        country: 'NG',
        card: { cardNumber: '4111111111111111', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: '' },
      });
      expect(pay.body).toMatchObject({ statusCode: '02', message: 'pending-authenticaion' });
      const track = await postOneBlock('/checkout/order/event/track', node.keys.test, {
        orderReference: reference,
        event: 'paid',
        description: '',
        metadata: '',
      });
      expect(track.body.statusCode).toBe('00');
    });

    it('creates an order whose customer gives an email and an empty mobile, or no mobile at all', async () => {
      for (const customer of [
        { firstname: 'Ada', lastname: 'Obi', mobile: '', country: 'NG', email: 'ada.nomobile@example.test' },
        { firstname: 'Ada', lastname: 'Obi', country: 'NG', email: 'ada.nomobile@example.test' },
      ]) {
        const reference = nextRef();
        const res = await postEncrypted(t.baseUrl, '/checkout/order/create', pub, enc, { ...orderPlaintext(reference), customer });
        expect(res.status).toBe(200);
        expect(res.body.data.customer).toEqual({ email: 'ada.nomobile@example.test', firstName: 'Ada', lastName: 'Obi', mobile: '', country: 'NG' });
        const verify = await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: priv, body: { reference } });
        expect(verify.body.data.customer).toMatchObject({ emailAddress: 'ada.nomobile@example.test', mobileNumber: '' });
      }
    });

    it('still requires an email, and checks a mobile that is given', async () => {
      const noEmail = await postEncrypted(t.baseUrl, '/checkout/order/create', pub, enc, {
        ...orderPlaintext(nextRef()),
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: '' },
      });
      expect(noEmail.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Email field is required.' });
      const badMobile = await postEncrypted(t.baseUrl, '/checkout/order/create', pub, enc, {
        ...orderPlaintext(nextRef()),
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: 'call me', country: 'NG', email: 'ada@example.test' },
      });
      expect(badMobile.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Mobile field is not a valid phone number.' });
    });

    it('reads every optional field sent as an empty or blank string as left out, in every plaintext and body', async () => {
      const reference = nextRef();
      const created = await postEncrypted(t.baseUrl, '/checkout/order/create', pub, enc, {
        ...orderPlaintext(reference, { RedirectUrl: 'https://merchant.test/done', paymentLinkId: '', frequencyId: '', numberOfPayments: ' ' }),
        order: { amount: 1000, reference, description: '', currency: '' },
        paymentMeta: { ipAddress: '' },
      });
      expect(created.status).toBe(200);
      expect(created.body.data.order).toMatchObject({ reference, currency: 'NGN', narration: '', paymentLinkId: null, recurringPaymentId: null });
      const fee = await postEncrypted(t.baseUrl, '/checkout/order/fee', pub, enc, { amount: 1000, paymentOption: 'C', currency: '' });
      expect(fee.body).toMatchObject({ statusCode: '00', data: { fee: 15 } });
      const track = await postEncrypted(t.baseUrl, '/checkout/order/event/track', pub, enc, {
        orderReference: reference,
        event: 'checkout.viewed',
        description: '',
        metadata: '',
      });
      expect(track.body.statusCode).toBe('00');
      const pay = await postEncrypted(t.baseUrl, '/checkout/order/pay', pub, enc, {
        reference,
        paymentOption: 'C',
        country: 'NG',
        card: { cardNumber: '4111111111111111', expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: '' },
      });
      expect(pay.body).toMatchObject({ statusCode: '02' });
      const link = await createLink({ ...validLink, Amount: '', Mobile: '', Limit: '', Website: ' ', BackgroundImage: '' });
      expect(link.status).toBe(200);
      expect(link.body.data.paymentLink).toMatchObject({ amount: null, limit: null, logo: null });
    });

    it('reports a required field sent as an empty string as missing', async () => {
      expect((await createLink({ ...validLink, Description: '' })).body).toEqual({
        status: 'failed',
        statusCode: 'VAL400',
        message: 'The Description field is required.',
      });
      const fee = await postEncrypted(t.baseUrl, '/checkout/order/fee', pub, enc, { amount: 1000, paymentmethod: '' });
      expect(fee.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'payment option is required!' });
    });
  });

  describe('unknown properties are ignored', () => {
    it('link create and edit ignore properties they do not know', async () => {
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

    it('every encrypted plaintext, at every level, ignores unknown properties', async () => {
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
    it('a null beside the same field in another casing is not a duplicate, and optional nulls are absent', async () => {
      const res = await createLink({ ...validLink, name: null, Mobile: null, Limit: null, Website: null, BackgroundImage: null });
      expect(res.status).toBe(200);
      expect(res.body.data.paymentLink).toMatchObject({ name: 'Gym', limit: null });
    });

    it('a required field sent as null is reported as missing', async () => {
      const res = await createLink({ ...validLink, Description: null });
      expect(res.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Description field is required.' });
      const order = await postEncrypted(t.baseUrl, '/checkout/order/create', pub, enc, { ...orderPlaintext(nextRef()), payment: null });
      expect(order.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'The Payment field is required.' });
    });

    it('null optional objects and fields in plaintexts are absent', async () => {
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

  describe('link edit bodies', () => {
    it('edit accepts the id legacy clients send (null, or the link id), the path names the link', async () => {
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
    it('every order endpoint answers under /payment as under /checkout', async () => {
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

    it('the alias has the same authentication, errors and key rules', async () => {
      expect((await request(t.baseUrl, 'POST', '/payment/order/status', { body: { data: 'x' } })).status).toBe(401);
      const noData = await request(t.baseUrl, 'POST', '/payment/order/status', { apiKey: pub, body: {} });
      expect(noData.body).toEqual({
        status: 'failed',
        statusCode: '400',
        message: 'Unable to find the encrypted data, please encrypt your payload and try again',
      });
      expect((await request(t.baseUrl, 'POST', '/payment/order/verify', { apiKey: pub, body: { reference: 'x' } })).status).toBe(403);
      // Every endpoint has the alias, link endpoints included: the same answer as under /checkout.
      const viaAlias = await request(t.baseUrl, 'POST', '/payment/links/create', { apiKey: priv, body: validLink });
      expect(viaAlias.status).toBe((await request(t.baseUrl, 'POST', '/checkout/links/create', { apiKey: priv, body: validLink })).status);
      expect(viaAlias.status).not.toBe(404);
    });
  });

  describe('recurring payment cancel', () => {
    let reference: string;
    beforeAll(async () => {
      const orderRef = nextRef();
      // Frequencies belong to subscription links: the subscription is made on one.
      const link = (
        await request(t.baseUrl, 'POST', '/checkout/links/create', {
          apiKey: priv,
          body: { Name: 'Club', Description: 'Daily', PaymentType: 'SUB', AuthOption: 'AUTH', Amount: '1000', FrequencyId: '2', NumberOfPayments: '3' },
        })
      ).body.data.paymentLink;
      await postEncrypted(
        t.baseUrl,
        '/checkout/order/create',
        pub,
        enc,
        orderPlaintext(orderRef, { RedirectUrl: 'https://merchant.test/done', paymentLinkId: link.id, frequencyId: 2, numberOfPayments: 3 }),
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

    it('refuses the public key and changes nothing', async () => {
      const res = await cancel(reference, pub);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ status: 'failed', statusCode: '403', message: 'This operation requires the private key.' });
      expect(await state(reference)).toBe('active');
    });

    it('cancels with the private key, and cancelling again answers the same', async () => {
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

    it("an unknown reference, or another merchant's, is 404 code 13", async () => {
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
