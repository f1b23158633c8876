import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

/**
 * The common card pay and the 3-D Secure answer run in plain SQL (src/payments/money-path.ts);
 * a link that can be used up (here: a Limit of paying customers) still takes the entity
 * manager's path. Both must leave the same rows: the order, its payment, the card (last four,
 * first six, brand, no number), the timeline, the outbox event with its webhook body and
 * delivery. Ids, references, tokens and times differ by nature and are masked.
 */
describe('the plain-SQL money path writes what the entity-manager path writes', () => {
  let t: TestService;
  let m: CreatedMerchant;
  beforeAll(async () => {
    t = await startTestService();
    m = await createTestMerchant(t, { name: 'Rows Books', webhookUrl: 'https://hooks.example.test/rows' });
  });
  afterAll(async () => {
    await t.close();
  });

  const k = () => m.keys.test;
  let counter = 0;
  const link = async (authOption: 'NOAUTH' | 'AUTH', limit?: number) =>
    (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: k().privateKey,
        body: {
          Name: `Rows ${authOption} ${limit ?? 'open'}`,
          Description: 'd',
          PaymentType: 'MC',
          AuthOption: authOption,
          ...(limit ? { Limit: limit } : {}),
        },
      })
    ).body.data.paymentLink.id as number;
  const createOrder = async (paymentLinkId: number) => {
    const reference = `ROWS-${process.pid}-${Date.now()}-${(counter += 1)}`;
    const created = await postEncrypted(t.baseUrl, '/checkout/order/create', k().publicKey, k().encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada.rows@example.test' },
      order: { amount: 1500, reference, description: 'Rows', currency: 'NGN' },
      payment: { RedirectUrl: 'https://shop.example.test/back', paymentLinkId },
    });
    expect(created.body.statusCode).toBe('01');
    return reference;
  };
  const pay = (reference: string, cardNumber: string) =>
    postEncrypted(t.baseUrl, '/checkout/order/pay', k().publicKey, k().encryptionKey, {
      reference,
      paymentOption: 'C',
      country: 'NG',
      card: { cardNumber, expiryMonth: '12', expiryYear: '39', cvv: '123' },
    });
  const otp = (url: string, code: string) =>
    fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `otp=${code}` });

  const sql = (text: string, params: unknown[]) => t.service.runtime.ctx.orm.em.getConnection().execute(text, params);
  const VARYING =
    /^(id|order_id|order_payment_id|event_id|reference|payment_reference|processor_reference|processor_token|card_token|cardToken|orderPaymentId|eventId|orderId|paymentLinkId|appEnvironmentId|orderPaymentReference|paymentReference|customerId)$/;
  const TIME = /(_at|_date|date_\w+|At|Date|date[A-Z]\w*)$/;
  /** Ids, references, tokens and times masked (present or null kept), at any depth; the link's own name and ids masked too. */
  const mask = (value: unknown, key = ''): unknown => {
    // The two links differ by nature (name, Limit): the order's link shows as present.
    if (key === 'paymentLink' && value) return '<link>';
    if (Array.isArray(value)) return value.map((v) => mask(v));
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k2, v]) => [k2, mask(v, k2)]));
    if (value === null || value === undefined) return value;
    if (VARYING.test(key) || TIME.test(key) || key === 'redirectUrl' || key === 'productName' || /^link|^paymentLink/.test(key)) return '<set>';
    if (typeof value === 'string' && value.includes('ROWS-')) return '<reference>';
    return value;
  };
  async function rowsOf(reference: string) {
    const [order] = await sql(
      `select status_id, payment_method, payment_response_code, payment_response_message, event_sequence, version, fee, total_charged_amount,
              provider_response_date is not null as answered, date_payment_confirmed is not null as confirmed, authorized_at, authorized_amount
         from checkout_order where reference = ?`,
      [reference],
    );
    const payments = await sql(`select p.* from order_payment p join checkout_order o on o.id = p.order_id where o.reference = ? order by p.id`, [reference]);
    const cards = await sql(
      `select d.* from card_detail d join order_payment p on p.id = d.order_payment_id join checkout_order o on o.id = p.order_id where o.reference = ? order by d.id`,
      [reference],
    );
    const timeline = await sql(
      `select e.event, e.source, e.description, e.metadata from timeline_event e join checkout_order o on o.id = e.order_id where o.reference = ? order by e.id`,
      [reference],
    );
    const events = await sql(
      `select e.notify, e.notify_type, e.sequence, e.payload, (select count(*)::int from webhook_delivery w where w.event_id = e.id) as deliveries,
              (select min(w.url) from webhook_delivery w where w.event_id = e.id) as url
         from outbox_event e join checkout_order o on o.id = e.order_id where o.reference = ? order by e.sequence`,
      [reference],
    );
    return mask({ order, payments, cards, timeline, events });
  }

  it('leaves the same order, payment, card, timeline and outbox rows for an approved and a declined NOAUTH card pay', async () => {
    const [plainLink, ormLink] = [await link('NOAUTH'), await link('NOAUTH', 1000)];
    for (const cardNumber of ['5123450000000008', '4000000000000002']) {
      const [plain, orm] = [await createOrder(plainLink), await createOrder(ormLink)];
      const [a, b] = [await pay(plain, cardNumber), await pay(orm, cardNumber)];
      expect(mask(a.body)).toEqual(mask(b.body));
      const [plainRows, ormRows] = [await rowsOf(plain), await rowsOf(orm)];
      expect(plainRows).toEqual(ormRows);
      expect(JSON.stringify(plainRows)).not.toContain(cardNumber);
    }
  });

  it('leaves the same rows for a 3-D Secure pay answered on its page, passed and failed', async () => {
    const [plainLink, ormLink] = [await link('AUTH'), await link('AUTH', 1000)];
    for (const code of ['123456', '000000']) {
      const [plain, orm] = [await createOrder(plainLink), await createOrder(ormLink)];
      const [a, b] = [await pay(plain, '5123450000000008'), await pay(orm, '5123450000000008')];
      expect(a.body.statusCode).toBe('02');
      expect(mask(a.body)).toEqual(mask(b.body));
      expect(await rowsOf(plain)).toEqual(await rowsOf(orm));
      const [pa, pb] = [await otp(a.body.data.paymentDetail.redirectUrl, code), await otp(b.body.data.paymentDetail.redirectUrl, code)];
      expect([pa.status, new URL(pa.headers.get('location')!).searchParams.get('status')]).toEqual([
        pb.status,
        new URL(pb.headers.get('location')!).searchParams.get('status'),
      ]);
      expect(await rowsOf(plain)).toEqual(await rowsOf(orm));
    }
  });
});
