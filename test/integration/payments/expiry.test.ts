import { startTestService, type TestService } from '../../support/service';
import { postEncrypted, request } from '../../support/http';
import { createTestMerchant } from '../../support/merchants';
import { encryptPayload } from '../../support/payload-client';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';
import { ManualClock } from '../../../src/shared/clock';
import { createScratchDatabase } from '../../support/scratch-database';

let counter = 0;
const nextRef = () => `EXP-${process.pid}-${Date.now()}-${++counter}`;
const billing = { street: '1 Marina', city: 'Lagos', state: 'Lagos', country: 'NG', zipcode: '101001' };
const card = (cardNumber: string) => ({ cardNumber, expiryMonth: '12', expiryYear: '30', cvv: '123', billingAddress: billing });

/**
 * Issue 10 point 6: orders the hosted payment-link page created and nobody paid. On a database
 * of this file's own: the expiry sweep acts on every order it finds, and a moved clock here
 * must not expire other test files' payments (nor theirs ours).
 */
describe('unpaid payment-link orders', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let t: TestService;
  let m: CreatedMerchant;
  const clock = new ManualClock(new Date());
  beforeAll(async () => {
    scratch = await createScratchDatabase('payments_expiry');
    t = await startTestService({ DATABASE_URL: scratch.url, AUTH_TIMEOUT_MS: '60000' }, { clock });
    m = await createTestMerchant(t);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await scratch?.drop();
  });

  const k = () => m.keys.test;
  const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
  async function createOrder() {
    const reference = nextRef();
    const res = await postEncrypted(t.baseUrl, '/checkout/order/create', k().publicKey, k().encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 1000, reference, description: 'Order', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/return' },
    });
    expect(res.body.statusCode).toBe('01');
    return reference;
  }
  const verify = async (reference: string) =>
    (await request(t.baseUrl, 'POST', '/checkout/order/verify', { apiKey: k().privateKey, body: { reference } })).body.data;
  const link = async (body: Record<string, string>) =>
    (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: k().privateKey,
        body: { Name: 'Link', Description: 'd', Currency: 'NGN', AuthOption: 'AUTH', Amount: '1000', ...body },
      })
    ).body.data.paymentLink as { id: number; reference: string };
  const checkout = (linkReference: string, customer: Record<string, string>, instrument: Record<string, unknown>, paymentOption = 'C') =>
    request(t.baseUrl, 'POST', `/pay/${linkReference}`, { body: { paymentOption, customer, data: encryptPayload(instrument, k().encryptionKey) } });

  describe('failed payment-link attempts leave no orphan Initiated orders', () => {
    it('a refused attempt leaves no order; an unpaid payment-link order expires with the authentication timeout, and never counts against the link limit', async () => {
      const l = await link({ PaymentType: 'MC', Limit: '1', AuthOption: 'NOAUTH' });
      const customer = (name: string) => ({
        firstname: name,
        lastname: 'Obi',
        mobile: '+2348012345678',
        country: 'NG',
        email: `${name.toLowerCase()}+${Date.now()}@example.test`,
      });
      // A refused attempt creates no order at all.
      const refused = await checkout(l.reference, customer('Refused'), { card: card('4111111111111112') });
      expect(refused.status).toBe(400);
      expect(await sql(`select reference from checkout_order where payment_link_id = ?`, [l.id])).toEqual([]);
      // An order the page made and never got to pay (the process stopped between the two steps), as the page makes it.
      const tenant = t.service.runtime.ctx.services.linkCheckout.tenantOf((await t.service.runtime.ctx.services.linkCheckout.findLink(l.reference))!);
      await t.service.runtime.ctx.services.orders.create(
        tenant,
        {
          customer: customer('Orphan'),
          order: { amount: 1000, reference: `LNK-${nextRef()}`, currency: 'NGN' },
          payment: { redirectUrl: 'https://m.test', paymentLinkId: l.id },
        },
        { expiresAt: new Date(clock.now().getTime() + 60_000) },
      );
      const orphans = await sql(`select reference, status_id from checkout_order where payment_link_id = ?`, [l.id]);
      expect(orphans).toEqual([{ reference: expect.stringMatching(/^LNK-/), status_id: 1 }]);

      // The orphan does not use up the link's one paying customer.
      const ok = await checkout(l.reference, customer('Payer'), { card: card('4111111111111111') });
      expect(ok.status).toBe(200);
      expect(new URL(ok.body.redirectUrl).searchParams.get('status')).toBe('successful');

      expect(await t.service.runtime.ctx.services.payments.expireStaleAuthentications()).toBe(0);
      clock.advance(61_000);
      try {
        expect(await t.service.runtime.ctx.services.payments.expireStaleAuthentications()).toBeGreaterThanOrEqual(1);
      } finally {
        clock.advance(-61_000);
      }
      const orphan = await verify(orphans[0].reference);
      expect(orphan).toMatchObject({ statusId: 4, status: 'Failed', paymentResponseCode: 'Z4', paymentResponseMessage: 'Order expired unpaid' });
      const events = await sql(`select e.notify_type from outbox_event e join checkout_order o on o.id = e.order_id where o.reference = ?`, [
        orphans[0].reference,
      ]);
      expect(events).toEqual([{ notify_type: 'failed' }]);
    });

    it('orders created through the API never expire unpaid', async () => {
      const reference = await createOrder();
      clock.advance(3_600_000);
      try {
        await t.service.runtime.ctx.services.payments.expireStaleAuthentications();
      } finally {
        clock.advance(-3_600_000);
      }
      expect((await verify(reference)).statusId).toBe(1);
    });
  });
});
