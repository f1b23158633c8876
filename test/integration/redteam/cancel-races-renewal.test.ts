import { request } from '../../support/http';
import { HOUR, useSubscriptionService } from './support';

/**
 * chargeDue records the renewal (order Processing) and COMMITS, releasing the subscription's row
 * lock, then calls the processor. A cancel that lands in between takes the lock at once, answers
 * "cancelled", and the charge still goes out; its settlement (subscription-books.ts recordCharge)
 * then rewrites the cancelled subscription's books without looking at its state.
 */
describe('red team: a cancel racing a renewal', () => {
  const s = useSubscriptionService('rt_cancel_race');

  /** Runs the billing sweep with the merchant's cancel arriving just before the saved card is charged. */
  async function renewWithCancelInFlight(recurringReference: string) {
    const processor = s.processor();
    const original = processor.chargeToken.bind(processor);
    let cancelAnswer: { status: number; body: any } | undefined;
    processor.chargeToken = async (req) => {
      cancelAnswer = await request(s.t().baseUrl, 'PATCH', `/checkout/links/recurringpayment/${recurringReference}/cancel`, {
        apiKey: s.m().keys.test.privateKey,
      });
      return original(req);
    };
    try {
      await s.services().recurring.chargeDue();
    } finally {
      processor.chargeToken = original;
    }
    return cancelAnswer!;
  }

  it('a subscription the merchant was told is cancelled is not charged afterwards', async () => {
    const { recurring } = await s.subscribe(3);
    s.clock.advance(HOUR);
    const cancel = await renewWithCancelInFlight(recurring.reference);
    // The merchant (and through them the customer) is told: cancelled, nothing more is charged.
    expect(cancel.status).toBe(200);
    expect(cancel.body.data).toMatchObject({ state: 'cancelled', cancelled: true });
    // ...yet the card was charged after that answer.
    expect(await s.sandboxChargesOf(recurring.id)).toEqual([]);
  });

  it("the in-flight renewal's settlement does not rewrite a cancelled subscription's books", async () => {
    const { recurring } = await s.subscribe(2);
    s.clock.advance(HOUR);
    const cancel = await renewWithCancelInFlight(recurring.reference);
    expect(cancel.body.data).toMatchObject({ state: 'cancelled', cancelled: true });
    expect(await s.recurringRow(recurring.id)).toMatchObject({ state: 'cancelled', next_charge_at: null });
  });
});
