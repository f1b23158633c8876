import { startTestService, type TestService } from '../../support/service';
import { request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { encryptPayload } from '../../support/payload-client';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

const billing = { street: '1 Marina', city: 'Lagos', country: 'NG' };
const customer = { firstname: 'Ada', lastname: 'Obi', email: 'ada@example.test', mobile: '+2348012345678', country: 'NG' };

/** The hosted payment-link page's server side, driven as the page's script drives it. */
describe('payment link checkout', () => {
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    // Many card attempts from one address: the per-IP card limit is tested elsewhere (protection).
    t = await startTestService({ RATE_LIMIT_CARD_ATTEMPTS_PER_IP: '100' });
    m = await createTestMerchant(t, { name: 'Ikeja Books' });
  });
  afterAll(async () => {
    await t.close();
  });

  const createLink = async (body: Record<string, string>) =>
    (await request(t.baseUrl, 'POST', '/checkout/links/create', { apiKey: m.keys.test.privateKey, body: { Description: 'd', AuthOption: 'AUTH', ...body } }))
      .body.data.paymentLink;
  const cardPayload = (cardNumber = '5123450000000008') =>
    encryptPayload({ card: { cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing } }, m.keys.test.encryptionKey);
  const checkout = (reference: string, body: Record<string, unknown>) => request(t.baseUrl, 'POST', `/pay/${reference}`, { body });

  it('lets the customer enter the amount when the link has none, and pays through 3-D Secure', async () => {
    const link = await createLink({ Name: 'Donation', PaymentType: 'MC' });
    const page = await fetch(link.paymentLinkUrl);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('Ikeja Books');
    expect(html).toContain('name="amount"');
    expect(html).toContain(`data-encryption-key="${m.keys.test.encryptionKey}"`);

    const res = await checkout(link.reference, { amount: '750.25', paymentOption: 'C', customer, data: cardPayload() });
    expect(res.status).toBe(200);
    expect(res.body.redirectUrl).toMatch(/\/sandbox\/3ds\/OP/);
    const done = await fetch(res.body.redirectUrl, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'otp=123456',
    });
    const landed = new URL(done.headers.get('location')!);
    expect(landed.pathname).toBe(`/pay/${link.reference}/result`); // no Website: the service's own result page
    expect(landed.searchParams.get('status')).toBe('successful');
    const result = await fetch(landed);
    expect(await result.text()).toContain('Payment successful');

    const verify = await request(t.baseUrl, 'POST', '/checkout/order/verify', {
      apiKey: m.keys.test.privateKey,
      body: { reference: landed.searchParams.get('reference') },
    });
    expect(verify.body.data).toMatchObject({ statusId: 5, totalAmountCharged: 750.25, paymentLinkId: link.id, productName: 'Donation' });
  });

  it('pays with PayPal from the page', async () => {
    const link = await createLink({ Name: 'Book', PaymentType: 'MC', Amount: '3000' });
    const paypal = encryptPayload(
      { paypal: { fullName: 'Ada Obi', mobile: '+2348012345678', house: '4', billingAddress: billing } },
      m.keys.test.encryptionKey,
    );
    const res = await checkout(link.reference, { paymentOption: 'PAYPAL', customer, data: paypal });
    expect(res.body.redirectUrl).toMatch(/\/sandbox\/paypal\//);
  });

  describe('a link the merchant edits after its page was shown', () => {
    const edit = (id: number, body: Record<string, string>) =>
      request(t.baseUrl, 'PATCH', `/checkout/links/${id}/edit`, { apiKey: m.keys.test.privateKey, body: { Description: 'd', ...body } });
    /** What the page's script posts back besides the customer's input: the form's data-terms and data-amount. */
    const shownOn = async (url: string) => {
      const html = await (await fetch(url)).text();
      return { terms: /data-terms="([^"]+)"/.exec(html)?.[1], amount: /data-amount="([^"]+)"/.exec(html)?.[1] ?? null };
    };
    const verify = async (redirectUrl: string) =>
      (
        await request(t.baseUrl, 'POST', '/checkout/order/verify', {
          apiKey: m.keys.test.privateKey,
          body: { reference: new URL(redirectUrl).searchParams.get('reference') },
        })
      ).body.data;
    const CHANGED = { message: 'This payment link changed since this page was shown: reload the page to see what you would pay.' };

    it('refuses a payment whose page showed a fixed amount the merchant has raised since, creating no order; the reloaded page pays the new amount', async () => {
      const link = await createLink({ Name: 'Atlas', PaymentType: 'MC', Amount: '100', AuthOption: 'NOAUTH' });
      const shown = await shownOn(link.paymentLinkUrl);
      expect(shown.amount).toBe('100.00');
      expect((await edit(link.id, { Name: 'Atlas', PaymentType: 'MC', Amount: '9999', AuthOption: 'NOAUTH' })).status).toBe(200);
      const ordersBefore = await t.service.runtime.ctx.orm.em
        .getConnection()
        .execute('select count(*)::int as n from checkout_order where payment_link_id = ?', [link.id]);
      for (const body of [shown, { amount: shown.amount }, { terms: shown.terms }]) {
        const res = await checkout(link.reference, { ...body, paymentOption: 'C', customer, data: cardPayload() });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(CHANGED);
      }
      expect(
        await t.service.runtime.ctx.orm.em.getConnection().execute('select count(*)::int as n from checkout_order where payment_link_id = ?', [link.id]),
      ).toEqual(ordersBefore);
      const reloaded = await shownOn(link.paymentLinkUrl);
      const paid = await checkout(link.reference, { ...reloaded, paymentOption: 'C', customer, data: cardPayload() });
      expect(paid.status).toBe(200);
      expect(await verify(paid.body.redirectUrl)).toMatchObject({ statusId: 5, totalAmountCharged: 9999 });
    });

    it('refuses an amount the customer typed when the link has since been given a fixed amount', async () => {
      const link = await createLink({ Name: 'Tip jar', PaymentType: 'MC', AuthOption: 'NOAUTH' });
      const shown = await shownOn(link.paymentLinkUrl);
      expect(shown.amount).toBeNull();
      expect((await edit(link.id, { Name: 'Tip jar', PaymentType: 'MC', Amount: '9999', AuthOption: 'NOAUTH' })).status).toBe(200);
      for (const body of [{ terms: shown.terms, amount: '50' }, { amount: '50' }]) {
        const res = await checkout(link.reference, { ...body, paymentOption: 'C', customer, data: cardPayload() });
        expect(res.status).toBe(400);
        expect(res.body).toEqual(CHANGED);
      }
    });

    it('refuses a payment whose page asked for 3-D Secure when the link no longer does', async () => {
      const link = await createLink({ Name: 'Lamp', PaymentType: 'MC', Amount: '500', AuthOption: 'AUTH' });
      const shown = await shownOn(link.paymentLinkUrl);
      expect((await edit(link.id, { Name: 'Lamp', PaymentType: 'MC', Amount: '500', AuthOption: 'NOAUTH' })).status).toBe(200);
      const res = await checkout(link.reference, { ...shown, paymentOption: 'C', customer, data: cardPayload() });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(CHANGED);
    });

    it('refuses a payment whose page showed a one-off payment when the link has since become a subscription, subscribing nobody', async () => {
      const link = await createLink({ Name: 'Poster', PaymentType: 'SC', Amount: '1000', AuthOption: 'NOAUTH' });
      const shown = await shownOn(link.paymentLinkUrl);
      const edited = await edit(link.id, {
        Name: 'Poster',
        PaymentType: 'SUB',
        Amount: '1000',
        AuthOption: 'NOAUTH',
        FrequencyId: '2',
        NumberOfPayments: '12',
      });
      expect(edited.status).toBe(200);
      const res = await checkout(link.reference, { ...shown, paymentOption: 'C', customer, data: cardPayload() });
      const subscriptions = await t.service.runtime.ctx.orm.em
        .getConnection()
        .execute(`select r.id from recurring_payment r join checkout_order o on o.id = r.order_id where o.payment_link_id = ?`, [link.id]);
      expect({ status: res.status, body: res.body, subscriptions }).toEqual({ status: 400, body: CHANGED, subscriptions: [] });
      // Nor may a subscription's page pay once its number of payments changed.
      const shownSub = await shownOn(link.paymentLinkUrl);
      await edit(link.id, { Name: 'Poster', PaymentType: 'SUB', Amount: '1000', AuthOption: 'NOAUTH', FrequencyId: '2', NumberOfPayments: '24' });
      expect((await checkout(link.reference, { ...shownSub, paymentOption: 'C', customer, data: cardPayload() })).body).toEqual(CHANGED);
    });

    it('pays as shown when only the name or description changed', async () => {
      const link = await createLink({ Name: 'Mug', PaymentType: 'MC', Amount: '1500', AuthOption: 'NOAUTH' });
      const shown = await shownOn(link.paymentLinkUrl);
      expect((await edit(link.id, { Name: 'Big mug', Description: 'Now bigger', PaymentType: 'MC', Amount: '1500', AuthOption: 'NOAUTH' })).status).toBe(200);
      const res = await checkout(link.reference, { ...shown, paymentOption: 'C', customer, data: cardPayload() });
      expect(res.status).toBe(200);
      expect((await verify(res.body.redirectUrl)).statusId).toBe(5);
    });
  });

  it('answers clear errors, never a 500', async () => {
    const link = await createLink({ Name: 'Single', PaymentType: 'SC', Amount: '100' });
    const tampered = await checkout(link.reference, { paymentOption: 'C', customer, data: cardPayload().replace(/^../, 'AA') });
    expect(tampered).toMatchObject({ status: 400, body: { message: 'Your card details could not be read. Please reload the page and try again.' } });
    const noCustomer = await checkout(link.reference, { paymentOption: 'C', data: cardPayload() });
    expect(noCustomer).toMatchObject({ status: 400, body: { message: 'The Customer field is required.' } });
    const luhn = await checkout(link.reference, { paymentOption: 'C', customer, data: cardPayload('4111111111111112') });
    expect(luhn).toMatchObject({ status: 400, body: { message: 'The CardNumber field is not a valid card number.' } });
    const missing = await fetch(`${t.baseUrl}/pay/PLNOSUCHLINK`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('Payment link not found');
  });

  describe('a refused attempt leaves nothing behind', () => {
    const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
    const traces = async (linkId: number) =>
      (
        await sql(
          `select count(*)::int as orders, (select count(*)::int from timeline_event e join checkout_order o on o.id = e.order_id where o.payment_link_id = ?) as events
             from checkout_order where payment_link_id = ?`,
          [linkId, linkId],
        )
      )[0];

    it('creates no order and no timeline for an invalid card, a below-minimum amount or an already paid link', async () => {
      const open = await createLink({ Name: 'Tips', PaymentType: 'MC' });
      const luhn = await checkout(open.reference, { amount: '50', paymentOption: 'C', customer, data: cardPayload('4111111111111112') });
      expect(luhn).toMatchObject({ status: 400, body: { message: 'The CardNumber field is not a valid card number.' } });
      const paypal = encryptPayload(
        { paypal: { fullName: 'Ada Obi', mobile: '+2348012345678', house: '4', billingAddress: billing } },
        m.keys.test.encryptionKey,
      );
      const small = await checkout(open.reference, { amount: '50', paymentOption: 'PAYPAL', customer, data: paypal });
      expect(small).toMatchObject({ status: 400, body: { message: 'The Amount field must be at least NGN 1,000.00 to pay by PayPal.' } });
      expect(await traces(open.id)).toEqual({ orders: 0, events: 0 });

      const single = await createLink({ Name: 'Once', PaymentType: 'SC', Amount: '100', AuthOption: 'NOAUTH' });
      const paid = await checkout(single.reference, { paymentOption: 'C', customer, data: cardPayload() });
      expect(new URL(paid.body.redirectUrl).searchParams.get('status')).toBe('successful');
      const before = await traces(single.id);
      expect(before.orders).toBe(1);
      const again = await checkout(single.reference, { paymentOption: 'C', customer, data: cardPayload() });
      expect(again).toMatchObject({ status: 400, body: { message: 'This payment link has already been paid.' } });
      expect(await traces(single.id)).toEqual(before);
    });
  });
});
