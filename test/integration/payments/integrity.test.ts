import { startTestService, type TestService } from '../../support/service';
import { graphql, postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { encryptPayload } from '../../support/payload-client';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { SandboxProcessor } from '../../../src/payments/sandbox/sandbox.processor';
import { leavePagesOpen } from '../../support/abandoned-pages';
import { WsSession } from '../graphql/ws-session';
import { ProcessorTimeoutError } from '../../../src/payments/processor-time-limit';

let counter = 0;
const nextRef = () => `INT-${process.pid}-${Date.now()}-${++counter}`;
const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const card = (cardNumber: string) => ({ cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing });
const paypal = { fullName: 'Ada Obi', mobile: '+2348012345678', house: '12B', billingAddress: billing };
const form = (body: string) => ({ method: 'POST', redirect: 'manual' as const, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });

/** Issue 10: money and payment integrity. */
describe('payment integrity', () => {
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Integrity Stores' });
  });
  afterAll(async () => {
    await t.close();
  });

  const k = () => m.keys.test;
  const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
  async function createOrder(options: { reference?: string; customer?: Record<string, string>; payment?: Record<string, unknown>; amount?: number } = {}) {
    const reference = options.reference ?? nextRef();
    const res = await postEncrypted(t.baseUrl, '/checkout/order/create', k().publicKey, k().encryptionKey, {
      customer: options.customer ?? { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `ada+${reference}@example.test` },
      order: { amount: options.amount ?? 1000, reference, description: 'Order', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/return', ...(options.payment ?? {}) },
    });
    expect(res.body.statusCode).toBe('01');
    return reference;
  }
  const pay = (reference: string, body: Record<string, unknown>) =>
    postEncrypted(t.baseUrl, '/checkout/order/pay', k().publicKey, k().encryptionKey, { reference, country: 'NG', ...body });
  const verify = async (reference: string) =>
    (await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: k().privateKey, body: { reference } })).body.data;
  const timeline = async (reference: string) => {
    const tenant = await t.service.runtime.ctx.services.auth.authenticate(k().publicKey);
    return t.service.runtime.ctx.services.timeline.list(tenant, reference);
  };
  const link = async (body: Record<string, string>) =>
    (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: k().privateKey,
        body: { Name: 'Link', Description: 'd', Currency: 'NGN', AuthOption: 'AUTH', Amount: '1000', ...body },
      })
    ).body.data.paymentLink as { id: number; reference: string };
  const checkout = (linkReference: string, customer: Record<string, string>, instrument: Record<string, unknown>, paymentOption = 'C') =>
    request(t.baseUrl, 'POST', `/pay/${linkReference}`, { body: { paymentOption, customer, data: encryptPayload(instrument, k().encryptionKey) } });

  describe('each authentication page accepts only its own form, for its own method', () => {
    it('the PayPal approval of a card payment (insufficient-funds card) is refused and changes nothing', async () => {
      const reference = await createOrder();
      const paid = await pay(reference, { paymentOption: 'C', card: card('4000000000000002') });
      const otpUrl: string = paid.body.data.paymentDetail.redirectUrl;
      const paymentRef = otpUrl.split('/').pop()!;

      // The bypass: decision=approve on the PayPal route with the card payment's token.
      const viaPaypal = await fetch(`${t.baseUrl}/sandbox/paypal/${paymentRef}`, form('decision=approve'));
      expect(viaPaypal.status).toBe(404);
      expect((await fetch(`${t.baseUrl}/sandbox/paypal/${paymentRef}`)).status).toBe(404);
      // The PayPal form on the card's own page.
      const onCardPage = await fetch(otpUrl, form('decision=approve'));
      expect(onCardPage.status).toBe(400);
      expect(await verify(reference)).toMatchObject({ statusId: 2, paymentResponseCode: '02' });

      // The card is then declined as it must be, through its one-time password.
      const answer = await fetch(otpUrl, form('otp=123456'));
      expect(answer.headers.get('location')).toContain('status=failed');
      expect(await verify(reference)).toMatchObject({ statusId: 4, paymentResponseCode: '51', paymentResponseMessage: 'Insufficient funds' });
    });

    it('a card payment page refuses anything but an otp, and changes nothing', async () => {
      const reference = await createOrder();
      const otpUrl: string = (await pay(reference, { paymentOption: 'C', card: card('5123450000000008') })).body.data.paymentDetail.redirectUrl;
      for (const body of ['', 'otp=', 'decision=cancel', 'otp=123456&decision=approve', 'otp=123456&extra=1']) {
        const res = await fetch(otpUrl, form(body));
        expect([body, res.status]).toEqual([body, 400]);
      }
      const json = await request(t.baseUrl, 'POST', new URL(otpUrl).pathname, { body: { otp: 123456 } });
      expect(json.status).toBe(400);
      expect(await verify(reference)).toMatchObject({ statusId: 2, orderPayments: [expect.objectContaining({ statusId: 2 })] });
      expect((await fetch(otpUrl, form('otp=123456'))).headers.get('location')).toContain('status=successful');
    });

    it('a PayPal payment page refuses an otp and the card page refuses the PayPal payment', async () => {
      const reference = await createOrder();
      const url: string = (await pay(reference, { paymentOption: 'PAYPAL', paypal })).body.data.paymentDetail.redirectUrl;
      const paymentRef = url.split('/').pop()!;
      expect((await fetch(url, form('otp=123456'))).status).toBe(400);
      expect((await fetch(url, form('decision=maybe'))).status).toBe(400);
      expect((await fetch(`${t.baseUrl}/sandbox/3ds/${paymentRef}`, form('otp=123456'))).status).toBe(404);
      expect((await fetch(`${t.baseUrl}/sandbox/3ds/${paymentRef}`)).status).toBe(404);
      expect((await verify(reference)).statusId).toBe(2);
      expect((await fetch(url, form('decision=approve'))).headers.get('location')).toContain('status=successful');
      expect((await verify(reference)).statusId).toBe(5);
    });
  });

  describe('the fee is the fee of the option paid with', () => {
    it('an order paid with PayPal is charged the PayPal fee, and the timeline records the change', async () => {
      const payer = await createTestMerchant(t);
      const tenant = await t.service.runtime.ctx.services.auth.authenticate(payer.keys.test.privateKey);
      await t.service.runtime.ctx.services.merchants.setFeeBearer(tenant, 'customer');
      const reference = nextRef();
      const created = await postEncrypted(t.baseUrl, '/checkout/order/create', payer.keys.test.publicKey, payer.keys.test.encryptionKey, {
        customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
        order: { amount: 1000, reference, description: 'Order', currency: 'NGN' },
        payment: { RedirectUrl: 'https://merchant.test/return' },
      });
      // Quoted at creation for a card: 1.5 %.
      expect(created.body.data.order.fee).toBe(15);
      expect(created.body.data.subsidiaryOrderSummary.totalAmount).toBe(1015);

      const paid = await postEncrypted(t.baseUrl, '/checkout/order/pay', payer.keys.test.publicKey, payer.keys.test.encryptionKey, {
        reference,
        paymentOption: 'PAYPAL',
        country: 'NG',
        paypal,
      });
      // PayPal in NGN: 4.4 % + 100.
      expect(paid.body.data.orderPayment).toMatchObject({ fee: 144, totalAmount: 1144 });
      await fetch(paid.body.data.paymentDetail.redirectUrl, form('decision=approve'));
      const details = (await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: payer.keys.test.privateKey, body: { reference } })).body.data;
      expect(details).toMatchObject({
        statusId: 5,
        paymentMethod: 'PayPal',
        fee: 144,
        customerFee: 144,
        subsidiaryFee: 0,
        feeRate: 0.044,
        totalAmountCharged: 1144,
      });

      const entries = await t.service.runtime.ctx.services.timeline.list(tenant, reference);
      const change = entries.find((e) => e.event === 'order.fee_changed')!;
      expect(change.metadata).toEqual({
        from: { paymentOption: 'C', fee: '15.0000', totalChargedAmount: '1015.0000' },
        to: { paymentOption: 'PAYPAL', fee: '144.00', totalChargedAmount: '1144.00' },
      });
      expect(entries.map((e) => e.event)).toEqual(['order.created', 'order.fee_changed', 'payment.initiated', 'authentication.passed', 'order.settled']);
    });

    it('a card payment keeps the card fee and records no change', async () => {
      const reference = await createOrder();
      const paid = await pay(reference, { paymentOption: 'C', card: card('5123450000000008') });
      expect(paid.body.data.orderPayment).toMatchObject({ fee: 15, totalAmount: 1000 });
      expect((await timeline(reference)).map((e) => e.event)).not.toContain('order.fee_changed');
    });
  });

  describe('an order keeps the customer it was created with', () => {
    it('a payer on a payment link giving an existing customer e-mail changes nothing of that customer or its orders', async () => {
      const email = `victim+${Date.now()}@example.test`;
      const reference = await createOrder({ customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email } });
      const l = await link({ PaymentType: 'MC' });
      const intruder = { firstname: 'Mallory', lastname: 'Evil', mobile: '+15550001111', country: 'US', email };
      const res = await checkout(l.reference, intruder, { card: card('5123450000000008') });
      expect(res.status).toBe(200);

      const original = { firstName: 'Ada', lastName: 'Obi', emailAddress: email, mobileNumber: '+2348012345678', countryShortName: 'NG' };
      expect((await verify(reference)).customer).toMatchObject(original);
      const [record] = await sql(
        `select first_name, last_name, mobile, country from customer c join app_environment e on e.id = c.environment_id where e.subsidiary_id = ? and e.mode = 'test' and c.email = ?`,
        [m.subsidiary.id, email],
      );
      expect(record).toEqual({ first_name: 'Ada', last_name: 'Obi', mobile: '+2348012345678', country: 'NG' });

      // The link's order shows what its payer typed; order/status and GraphQL read the same snapshot.
      const paymentRef = new URL(res.body.redirectUrl).pathname.split('/').pop();
      const [linkOrder] = await sql(`select o.reference from checkout_order o join order_payment p on p.order_id = o.id where p.reference = ?`, [paymentRef]);
      expect((await verify(linkOrder.reference)).customer).toMatchObject({
        firstName: 'Mallory',
        lastName: 'Evil',
        countryShortName: 'US',
        mobileNumber: '+15550001111',
        emailAddress: email,
      });
      const gql = await graphql(
        t.baseUrl,
        `
          query ($r: String!) {
            order(reference: $r) {
              customer {
                firstName
                lastName
                mobileNumber
                countryShortName
              }
            }
          }
        `,
        { r: reference },
        { 'api-key': k().privateKey },
      );
      expect(gql.body.data.order.customer).toEqual({ firstName: 'Ada', lastName: 'Obi', mobileNumber: '+2348012345678', countryShortName: 'NG' });
      const status = await postEncrypted(t.baseUrl, '/checkout/order/status', k().publicKey, k().encryptionKey, { reference });
      const [orders] = await sql(`select count(distinct customer_id)::int as n from checkout_order where reference in (?, ?)`, [
        reference,
        linkOrder.reference,
      ]);
      expect(orders.n).toBe(1);
      expect(status.body.data.customer_id).toEqual(expect.any(Number));
    });

    it('a later order with the same e-mail keeps its own details and leaves the earlier order as it was', async () => {
      const email = `twice+${Date.now()}@example.test`;
      const first = await createOrder({ customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email } });
      const second = await createOrder({ customer: { firstname: 'Adaeze', lastname: 'Okafor', mobile: '+2348099999999', country: 'GH', email } });
      expect((await verify(first)).customer).toMatchObject({ firstName: 'Ada', lastName: 'Obi', countryShortName: 'NG' });
      expect((await verify(second)).customer).toMatchObject({
        firstName: 'Adaeze',
        lastName: 'Okafor',
        countryShortName: 'GH',
        mobileNumber: '+2348099999999',
      });
    });

    it('concurrent creates with one new e-mail make one customer, and the database refuses a duplicate', async () => {
      const email = `race+${Date.now()}@example.test`;
      const references = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          createOrder({ customer: { firstname: `N${i}`, lastname: 'Race', mobile: '+2348012345678', country: 'NG', email } }),
        ),
      );
      const rows = await sql(
        `select count(distinct customer_id)::int as customers, count(*)::int as orders from checkout_order where reference in (${references.map(() => '?').join(',')})`,
        references,
      );
      expect(rows[0]).toEqual({ customers: 1, orders: 8 });
      await expect(
        sql(
          `insert into customer (environment_id, email, first_name, last_name, mobile, country) select environment_id, email, 'X', 'Y', '1', 'NG' from customer where email = ?`,
          [email],
        ),
      ).rejects.toThrow(/customer_environment_id_email_unique/);
    });
  });

  describe('the processor is called outside the transaction, idempotently', () => {
    it('a repeated sandbox call with the same idempotency key authorizes nothing new, and lookup finds it', async () => {
      const sandbox = new SandboxProcessor(t.service.runtime.ctx.orm);
      const key = `OPTEST${Date.now()}`;
      const request = {
        cardNumber: '4111111111111111',
        cvv: '123',
        expiryMonth: '12',
        expiryYear: '30',
        amount: '10.00',
        currency: 'NGN',
        reference: 'R',
        environmentId: 1,
        threeDSecure: false,
        idempotencyKey: key,
      };
      expect(await sandbox.lookup(key)).toBeNull();
      const first = await sandbox.authorizeCard(request);
      const again = await sandbox.authorizeCard({ ...request, cardNumber: '4000000000000002' });
      expect(first).toMatchObject({ kind: 'approved', code: '00' });
      expect(again).toEqual(first);
      expect(await sandbox.lookup(key)).toEqual(first);
      expect(await sql('select count(*)::int as n from sandbox_authorization where idempotency_key = ?', [key])).toEqual([{ n: 1 }]);
    });

    it('no row lock is held while the processor is called', async () => {
      const reference = await createOrder();
      const payments = t.service.runtime.ctx.services.payments as unknown as { processors: { test: SandboxProcessor } };
      const sandbox = payments.processors.test;
      const original = sandbox.authorizeCard.bind(sandbox);
      let seenDuringCall: unknown;
      sandbox.authorizeCard = async (r) => {
        // Another connection reads and locks the order while the processor is being called: it must not wait.
        seenDuringCall = await sql(`select status_id from checkout_order where reference = ? for update nowait`, [reference]);
        return original(r);
      };
      try {
        await pay(reference, { paymentOption: 'C', card: card('5123450000000008') });
      } finally {
        sandbox.authorizeCard = original;
      }
      expect(seenDuringCall).toEqual([{ status_id: 3 }]); // the attempt was committed (Processing) before the call
      expect((await verify(reference)).statusId).toBe(2);
    });
  });

  describe('an abandoned 3-D Secure page does not block a single-charge link', () => {
    const abandon = (...references: string[]) => leavePagesOpen(sql, ...references);

    it('a new attempt on the link supersedes the unauthenticated one', async () => {
      const l = await link({ PaymentType: 'SC' });
      const abandoned = await createOrder({ payment: { paymentLinkId: l.id } });
      const abandonedUrl: string = (await pay(abandoned, { paymentOption: 'C', card: card('5123450000000008') })).body.data.paymentDetail.redirectUrl;
      await abandon(abandoned);

      const next = await createOrder({ payment: { paymentLinkId: l.id } });
      const paid = await pay(next, { paymentOption: 'C', card: card('4111111111111111') });
      expect(paid.body.statusCode).toBe('02');
      expect(await verify(abandoned)).toMatchObject({
        statusId: 4,
        paymentResponseCode: 'Z3',
        paymentResponseMessage: 'Superseded by a newer payment attempt',
      });
      // The superseded page can no longer settle anything.
      expect((await fetch(abandonedUrl, form('otp=123456'))).headers.get('location')).toContain('status=failed');
      expect((await verify(abandoned)).statusId).toBe(4);

      expect((await fetch(paid.body.data.paymentDetail.redirectUrl, form('otp=123456'))).headers.get('location')).toContain('status=successful');
      // Paid once: the link takes no further payment.
      const third = await pay(await createOrder({ payment: { paymentLinkId: l.id } }), { paymentOption: 'C', card: card('4111111111111111') });
      expect(third.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'This payment link has already been paid.' });
    });

    /** A single-charge link whose first attempt waits on its 3-D Secure page, left open long enough to count as abandoned. */
    const abandonedOnSingleChargeLink = async () => {
      const l = await link({ PaymentType: 'SC' });
      const abandoned = await createOrder({ payment: { paymentLinkId: l.id } });
      await pay(abandoned, { paymentOption: 'C', card: card('5123450000000008') });
      await abandon(abandoned);
      return { l, abandoned };
    };
    const sandbox = () => (t.service.runtime.ctx.services.payments as unknown as { processors: { test: SandboxProcessor } }).processors.test;
    const sandboxRecord = async (reference: string) =>
      (
        await sql(
          `select s.state, s.result_code from sandbox_authorization s join order_payment p on p.reference = s.idempotency_key join checkout_order o on o.id = p.order_id where o.reference = ?`,
          [reference],
        )
      )[0];

    it("closes the superseded attempt's challenge at the processor: its cardholder's late answer is declined there", async () => {
      const { l, abandoned } = await abandonedOnSingleChargeLink();
      const [{ reference: key, token }] = await sql(
        `select p.reference, s.token from order_payment p join checkout_order o on o.id = p.order_id join sandbox_authorization s on s.idempotency_key = p.reference where o.reference = ?`,
        [abandoned],
      );

      const next = await pay(await createOrder({ payment: { paymentLinkId: l.id } }), { paymentOption: 'C', card: card('4111111111111111') });
      expect(next.body.statusCode).toBe('02');
      expect(await verify(abandoned)).toMatchObject({ statusId: 4, paymentResponseCode: 'Z3' });
      expect(await sandboxRecord(abandoned)).toEqual({ state: 'declined', result_code: 'Z3' });
      // The cardholder's answer, sent to the processor directly, can no longer authorize anything.
      expect(await sandbox().completeChallenge(key, token, '123456')).toMatchObject({ kind: 'declined' });
      expect(await sandboxRecord(abandoned)).toEqual({ state: 'declined', result_code: 'Z3' });
    });

    it('an abandoned attempt whose answer reached the processor (its response lost) is settled as paid, and the newer attempt refused: the link was paid', async () => {
      const l = await link({ PaymentType: 'SC' });
      const earlier = await createOrder({ payment: { paymentLinkId: l.id } });
      const otpUrl: string = (await pay(earlier, { paymentOption: 'C', card: card('5123450000000008') })).body.data.paymentDetail.redirectUrl;
      const processor = sandbox();
      const original = processor.completeChallenge;
      processor.completeChallenge = async (...args) => {
        await original.apply(processor, args); // approved at the processor ...
        throw new Error('connection reset by the acquirer'); // ... and the answer lost on the way back
      };
      try {
        expect((await fetch(otpUrl, form('otp=123456'))).status).toBe(500);
      } finally {
        processor.completeChallenge = original;
      }
      // The page's call left the attempt Processing; reconciliation is not due yet. Put it back as a page waiting for its answer.
      await sql(
        `update order_payment set status_id = 2 where order_id = (select id from checkout_order where reference = ?); update checkout_order set status_id = 2 where reference = ?`,
        [earlier, earlier],
      );
      await abandon(earlier);

      const later = await createOrder({ payment: { paymentLinkId: l.id } });
      const refused = await pay(later, { paymentOption: 'C', card: card('4111111111111111') });
      expect(refused.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'This payment link has already been paid.' });
      expect(await verify(earlier)).toMatchObject({ statusId: 5, paymentResponseCode: '00' });
      expect(await sandboxRecord(earlier)).toEqual({ state: 'approved', result_code: '00' });
      expect(await verify(later)).toMatchObject({ statusId: 1 });
    });

    it('an abandoned attempt whose challenge the processor cannot close now is not superseded: the newer attempt is not recorded', async () => {
      const { l, abandoned } = await abandonedOnSingleChargeLink();
      const processor = sandbox();
      const close = processor.closeKey;
      processor.closeKey = async () => {
        throw new Error('connection reset by the acquirer');
      };
      const later = await createOrder({ payment: { paymentLinkId: l.id } });
      try {
        const refused = await pay(later, { paymentOption: 'C', card: card('4111111111111111') });
        // Nothing of this pay was recorded: a 503 the merchant may send again as it is, never the 504 that asks to wait for an outcome.
        expect(refused.status).toBe(503);
        expect(refused.body).toEqual({
          status: 'failed',
          statusCode: '503',
          message: 'The payment processor could not be reached; nothing was recorded. Send the request again.',
        });
        const viaGraphql = await graphql(
          t.baseUrl,
          `
            mutation ($input: PayOrderInput!) {
              payOrder(input: $input) {
                redirectUrl
              }
            }
          `,
          {
            input: {
              reference: later,
              paymentOption: 'C',
              country: 'NG',
              encryptedPayload: encryptPayload({ card: card('4111111111111111') }, k().encryptionKey),
            },
          },
          { 'api-key': k().privateKey },
        );
        const unavailable = [
          expect.objectContaining({
            message: 'The payment processor could not be reached; nothing was recorded. Send the request again.',
            extensions: expect.objectContaining({ code: 'PROCESSOR_UNAVAILABLE', requestId: expect.any(String) }),
          }),
        ];
        expect(viaGraphql.body.errors).toEqual(unavailable);
        // The same mutation over graphql-ws is answered alike.
        const socket = await WsSession.open(t.baseUrl, { 'api-key': k().privateKey });
        try {
          socket.subscribe('pay', `mutation ($input: PayOrderInput!) { payOrder(input: $input) { redirectUrl } }`, {
            input: {
              reference: later,
              paymentOption: 'C',
              country: 'NG',
              encryptedPayload: encryptPayload({ card: card('4111111111111111') }, k().encryptionKey),
            },
          });
          const answer = await socket.result('pay');
          expect(answer.type).toBe('next');
          expect(answer.payload.errors).toEqual(unavailable);
        } finally {
          socket.close();
        }
      } finally {
        processor.closeKey = close;
      }
      // Claimed for the close, it is released when the close fails: it awaits its cardholder again, its challenge still open.
      expect(await verify(abandoned)).toMatchObject({ statusId: 2, paymentResponseCode: '02' });
      expect(await sandboxRecord(abandoned)).toEqual({ state: 'pending', result_code: null });
      expect(await verify(later)).toMatchObject({ statusId: 1 });
      expect(await sql(`select count(*)::int as n from order_payment p join checkout_order o on o.id = p.order_id where o.reference = ?`, [later])).toEqual([
        { n: 0 },
      ]);
    });

    it('a supersession whose processor lookup fails answers 503 too: nothing of the newer pay was recorded', async () => {
      const { l } = await abandonedOnSingleChargeLink();
      const processor = sandbox();
      const [close, lookup] = [processor.closeKey, processor.lookup];
      processor.closeKey = async () => false; // the close finds the key's record final ...
      processor.lookup = async () => {
        throw new ProcessorTimeoutError('lookup', 30_000); // ... and reading it times out
      };
      const later = await createOrder({ payment: { paymentLinkId: l.id } });
      try {
        expect((await pay(later, { paymentOption: 'C', card: card('4111111111111111') })).status).toBe(503);
      } finally {
        processor.closeKey = close;
        processor.lookup = lookup;
      }
      expect(await verify(later)).toMatchObject({ statusId: 1 });
    });

    it('a 3-D Secure page answered past its deadline while the processor cannot close its challenge shows the processing page, not an API error', async () => {
      const reference = await createOrder();
      const otpUrl: string = (await pay(reference, { paymentOption: 'C', card: card('5123450000000008') })).body.data.paymentDetail.redirectUrl;
      await sql(
        `update order_payment set authentication_expires_at = now() - interval '1 second' where order_id = (select id from checkout_order where reference = ?)`,
        [reference],
      );
      const processor = sandbox();
      const close = processor.closeKey;
      processor.closeKey = async () => {
        throw new ProcessorTimeoutError('closeKey', 30_000);
      };
      try {
        const answered = await fetch(otpUrl, form('otp=123456'));
        expect(answered.status).toBe(200);
        expect(answered.headers.get('content-type')).toContain('text/html');
      } finally {
        processor.closeKey = close;
      }
      // The claim was released: the clock's sweep expires it once the processor is back.
      expect(await verify(reference)).toMatchObject({ statusId: 2 });
    });

    it('a close that reached the processor but whose answer was lost still ends the attempt as superseded (Z3) at the next try', async () => {
      const { l, abandoned } = await abandonedOnSingleChargeLink();
      const processor = sandbox();
      const close = processor.closeKey;
      processor.closeKey = async (...args) => {
        await close.apply(processor, args);
        throw new Error('connection reset by the acquirer');
      };
      try {
        expect((await pay(await createOrder({ payment: { paymentLinkId: l.id } }), { paymentOption: 'C', card: card('4111111111111111') })).status).toBe(503);
      } finally {
        processor.closeKey = close;
      }
      expect(await sandboxRecord(abandoned)).toEqual({ state: 'declined', result_code: 'Z3' });
      const next = await pay(await createOrder({ payment: { paymentLinkId: l.id } }), { paymentOption: 'C', card: card('4111111111111111') });
      expect(next.body.statusCode).toBe('02');
      expect(await verify(abandoned)).toMatchObject({
        statusId: 4,
        paymentResponseCode: 'Z3',
        paymentResponseMessage: 'Superseded by a newer payment attempt',
      });
    });

    it("on a Limit link, a customer who paid keeps their further attempt: only another customer's abandoned attempt makes room", async () => {
      const l = await link({ PaymentType: 'MC', Limit: '2' });
      const customer = (name: string) => ({
        firstname: 'Ada',
        lastname: 'Obi',
        mobile: '+2348012345678',
        country: 'NG',
        email: `${name}-${nextRef()}@example.test`,
      });
      const a = customer('a');
      const first = await createOrder({ customer: a, payment: { paymentLinkId: l.id } });
      const url: string = (await pay(first, { paymentOption: 'C', card: card('4111111111111111') })).body.data.paymentDetail.redirectUrl;
      expect((await fetch(url, form('otp=123456'))).headers.get('location')).toContain('status=successful');
      const again = await createOrder({ customer: a, payment: { paymentLinkId: l.id } });
      expect((await pay(again, { paymentOption: 'C', card: card('5123450000000008') })).body.statusCode).toBe('02');
      const b = await createOrder({ customer: customer('b'), payment: { paymentLinkId: l.id } });
      expect((await pay(b, { paymentOption: 'C', card: card('5123450000000008') })).body.statusCode).toBe('02');
      await abandon(again, b);

      const c = await pay(await createOrder({ customer: customer('c'), payment: { paymentLinkId: l.id } }), {
        paymentOption: 'C',
        card: card('4111111111111111'),
      });
      expect(c.body.statusCode).toBe('02');
      expect(await verify(b)).toMatchObject({ statusId: 4, paymentResponseCode: 'Z3' });
      expect(await verify(again)).toMatchObject({ statusId: 2, paymentResponseCode: '02' });
    });

    const paymentStatusOf = async (reference: string) =>
      (await sql(`select p.status_id from order_payment p join checkout_order o on o.id = p.order_id where o.reference = ?`, [reference]))[0]?.status_id;

    it('an attempt whose page is answered just before its supersession would start is left to that answer: the newer attempt is refused', async () => {
      const l = await link({ PaymentType: 'SC' });
      const earlier = await createOrder({ payment: { paymentLinkId: l.id } });
      const otpUrl: string = (await pay(earlier, { paymentOption: 'C', card: card('5123450000000008') })).body.data.paymentDetail.redirectUrl;
      await abandon(earlier);
      const jobs = (t.service.runtime.ctx.services.payments as unknown as { jobs: { supersedeAttempt(orderId: number): Promise<boolean> } }).jobs;
      const supersede = jobs.supersedeAttempt;
      const processor = sandbox();
      const complete = processor.completeChallenge;
      let arrive!: () => void;
      const arrived = new Promise<void>((resolve) => (arrive = resolve));
      processor.completeChallenge = async (...args) => {
        await arrived; // the cardholder's answer is on its way to the processor
        return complete.apply(processor, args);
      };
      let page: Promise<Response> | undefined;
      jobs.supersedeAttempt = async (orderId) => {
        // Between the refusal that named the attempt and its claim, the cardholder submits the right password.
        page = fetch(otpUrl, form('otp=123456'));
        while ((await paymentStatusOf(earlier)) !== 3) await new Promise((resolve) => setTimeout(resolve, 10));
        return supersede.call(jobs, orderId);
      };
      try {
        const later = await createOrder({ payment: { paymentLinkId: l.id } });
        const refused = await pay(later, { paymentOption: 'C', card: card('4111111111111111') });
        // Not paid yet, only being paid: the customer is told to try again, not that the link is used up.
        expect(refused.body).toEqual({
          status: 'failed',
          statusCode: 'VAL400',
          message: 'Another payment on this payment link is in progress; try again in a few minutes.',
        });
        arrive();
        expect((await page!).headers.get('location')).toContain('status=successful');
        expect(await verify(earlier)).toMatchObject({ statusId: 5, paymentResponseCode: '00' });
      } finally {
        arrive();
        jobs.supersedeAttempt = supersede;
        processor.completeChallenge = complete;
      }
    });

    it('two newer attempts racing to supersede the same abandoned one end it once, as superseded (Z3); one of them gets the link', async () => {
      const { l, abandoned } = await abandonedOnSingleChargeLink();
      const processor = sandbox();
      const close = processor.closeKey;
      let calls = 0;
      processor.closeKey = async (...args) => {
        const closed = await close.apply(processor, args);
        if (++calls === 1) await new Promise((resolve) => setTimeout(resolve, 500)); // the first answer is slow to come back
        return closed;
      };
      try {
        const [a, b] = [await createOrder({ payment: { paymentLinkId: l.id } }), await createOrder({ payment: { paymentLinkId: l.id } })];
        const answers = await Promise.all([a, b].map((r) => pay(r, { paymentOption: 'C', card: card('4111111111111111') })));
        expect(answers.map((r) => r.body.statusCode).sort()).toEqual(['02', 'VAL400']);
        expect(answers.find((r) => r.body.statusCode === 'VAL400')!.body.message).toBe(
          'Another payment on this payment link is in progress; try again in a few minutes.',
        );
        expect(await verify(abandoned)).toMatchObject({
          statusId: 4,
          paymentResponseCode: 'Z3',
          paymentResponseMessage: 'Superseded by a newer payment attempt',
        });
        const events = (await timeline(abandoned)).map((e: { event: string }) => e.event);
        expect(events).not.toContain('authentication.passed');
        expect(events.filter((e: string) => e === 'authentication.failed')).toHaveLength(1);
      } finally {
        processor.closeKey = close;
      }
    });

    it("on a Limit link, all of one customer's abandoned attempts go together to free their seat for a new customer", async () => {
      const l = await link({ PaymentType: 'MC', Limit: '1' });
      const holder = { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `holder-${nextRef()}@example.test` };
      const held: string[] = [];
      for (let i = 0; i < 6; i++) {
        const reference = await createOrder({ customer: holder, payment: { paymentLinkId: l.id } });
        expect((await pay(reference, { paymentOption: 'C', card: card('5123450000000008') })).body.statusCode).toBe('02');
        held.push(reference);
      }
      await abandon(...held);
      const next = await pay(await createOrder({ payment: { paymentLinkId: l.id } }), { paymentOption: 'C', card: card('4111111111111111') });
      expect(next.body.statusCode).toBe('02');
      expect(await Promise.all(held.map(async (r) => (await verify(r)).paymentResponseCode))).toEqual(held.map(() => 'Z3'));
    });

    it("a refused attempt supersedes nothing: a paying customer's further attempt on a Limit link is left alone", async () => {
      const l = await link({ PaymentType: 'MC', Limit: '1' });
      const payer = { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: `payer-${nextRef()}@example.test` };
      const first = await createOrder({ customer: payer, payment: { paymentLinkId: l.id } });
      const url: string = (await pay(first, { paymentOption: 'C', card: card('4111111111111111') })).body.data.paymentDetail.redirectUrl;
      expect((await fetch(url, form('otp=123456'))).headers.get('location')).toContain('status=successful');
      const again = await createOrder({ customer: payer, payment: { paymentLinkId: l.id } });
      expect((await pay(again, { paymentOption: 'C', card: card('5123450000000008') })).body.statusCode).toBe('02');
      await abandon(again);

      const other = await pay(await createOrder({ payment: { paymentLinkId: l.id } }), { paymentOption: 'C', card: card('4111111111111111') });
      expect(other.body).toEqual({ status: 'failed', statusCode: 'VAL400', message: 'This payment link has reached its limit of paying customers.' });
      expect(await verify(again)).toMatchObject({ statusId: 2, paymentResponseCode: '02' });
    });
  });

  it('an approval after the link was deactivated mid-authentication stands (the card was charged), with a timeline note', async () => {
    const l = await link({ PaymentType: 'SC' });
    const reference = await createOrder({ payment: { paymentLinkId: l.id } });
    const otpUrl: string = (await pay(reference, { paymentOption: 'C', card: card('5123450000000008') })).body.data.paymentDetail.redirectUrl;
    const disabled = await request(t.baseUrl, 'PATCH', `/checkout/links/${l.id}/status/disable`, { apiKey: k().privateKey });
    expect(disabled.status).toBe(200);
    const answer = await fetch(otpUrl, form('otp=123456'));
    expect(answer.status).toBe(303);
    expect(answer.headers.get('location')).toContain('status=successful');
    const order = await verify(reference);
    expect(order.statusId).toBe(5);
    expect((await timeline(reference)).map((e: { event: string }) => e.event)).toContain('payment.link_rule_overridden');
  });
});
