import { startTestService, type TestService } from '../../support/service';
import { createTestMerchant } from '../../support/merchants';
import { postEncrypted, request } from '../../support/http';
import { createScratchDatabase } from '../../support/scratch-database';
import type { CreatedMerchant } from '../../../src/merchants/merchant.service';

/**
 * Orders made on a link the instance kept from an earlier read, when the link or what it refers
 * to changed since. A database of its own: the charge frequencies changed here are shared by
 * every merchant.
 */
describe('an order create on a link kept from an earlier read', () => {
  let scratch: { url: string; drop(): Promise<void> };
  let t: TestService;
  let m: CreatedMerchant;

  beforeAll(async () => {
    scratch = await createScratchDatabase('kept_links');
    t = await startTestService({ DATABASE_URL: scratch.url });
    m = await createTestMerchant(t);
  }, 60_000);

  afterAll(async () => {
    await t?.close();
    await scratch?.drop();
  }, 30_000);

  const sql = (q: string, p: unknown[] = []) => t.service.runtime.ctx.orm.em.getConnection().execute(q, p);
  let counter = 0;
  const createOnLink = async (linkId: number) => {
    const reference = `KEPT-${Date.now()}-${++counter}`;
    const res = await postEncrypted(t.baseUrl, '/checkout/order/create', m.keys.test.publicKey, m.keys.test.encryptionKey, {
      customer: { firstname: 'Ada', lastname: 'Obi', mobile: '+2348012345678', country: 'NG', email: 'ada@example.test' },
      order: { amount: 1500, reference, description: 'Plan', currency: 'NGN' },
      payment: { RedirectUrl: 'https://merchant.test/return', paymentLinkId: linkId },
    });
    return { reference, body: res.body };
  };

  it('reads the link again before refusing by its kept frequency: a subscription moved off a withdrawn frequency takes the order', async () => {
    const link = (
      await request(t.baseUrl, 'POST', '/checkout/links/create', {
        apiKey: m.keys.test.privateKey,
        body: { Name: 'Plan', Description: 'Monthly plan', PaymentType: 'SUB', AuthOption: 'AUTH', Amount: '1500', FrequencyId: '1', NumberOfPayments: '3' },
      })
    ).body.data.paymentLink as { id: number };
    expect((await createOnLink(link.id)).body.statusCode).toBe('01'); // the link is kept, with frequency 1
    await sql(`update payment_link set frequency_id = 2 where id = ?`, [link.id]);
    await sql(`update frequency set is_active = false where id = 1`);
    const made = await createOnLink(link.id);
    expect(made.body.statusCode).toBe('01');
    expect((await sql(`select frequency_id from checkout_order where reference = ?`, [made.reference]))[0]).toEqual({ frequency_id: 2 });
  });
});
