import { HOUR, useSubscriptionService } from '../../support/subscription-service';
import type { FinalProcessorResult, RefundRequest } from '../../../src/payments/processor';

const REFUND = `mutation ($input: RefundOrderInput!) { refundOrder(input: $input) { id amount status failureReason } }`;

describe("a renewal's payment: its own processor token, its reconciliation, an approval past the number of payments", () => {
  const s = useSubscriptionService('renewal_payments');

  /** The processor's token of the saved-card charge of order `orderReference` (the sandbox's record of it). */
  const chargeTokenOf = async (orderReference: string) =>
    (
      await s.sql(
        `select a.token from sandbox_authorization a join order_payment p on p.reference = a.idempotency_key
           join checkout_order o on o.id = p.order_id where o.reference = ? and a.kind = 'charge'`,
        [orderReference],
      )
    )[0]?.token;
  const paymentOf = async (orderReference: string) =>
    (
      await s.sql(
        `select p.reference, p.status_id, p.processor_token from order_payment p join checkout_order o on o.id = p.order_id where o.reference = ? order by p.id desc limit 1`,
        [orderReference],
      )
    )[0];

  it("refunds a renewal against the renewal's own charge, and the first payment against the first payment", async () => {
    const { reference, recurring } = await s.subscribe(3);
    s.clock.advance(HOUR);
    expect(await s.services().recurring.chargeDue()).toBe(1);
    const orders = await s.ordersOf(recurring.id);
    expect(orders.map((o: { status_id: number }) => o.status_id)).toEqual([5, 5]);
    const renewalRef = orders[1].reference;
    const renewalCharge = await chargeTokenOf(renewalRef);
    const firstPayment = await paymentOf(reference);
    // The renewal's payment keeps the token of its own charge, not the saved card's.
    expect(renewalCharge).toEqual(expect.any(String));
    expect(await paymentOf(renewalRef)).toMatchObject({ status_id: 5, processor_token: renewalCharge });
    expect(renewalCharge).not.toBe(firstPayment.processor_token);

    const processor = s.processor();
    const calls: RefundRequest[] = [];
    const original = processor.refund.bind(processor);
    processor.refund = async (req) => {
      calls.push(req);
      return original(req);
    };
    try {
      const renewalRefund = await s.gql(REFUND, { input: { reference: renewalRef } });
      expect(renewalRefund.data.refundOrder.status).toBe('SUCCEEDED');
      const firstRefund = await s.gql(REFUND, { input: { reference } });
      expect(firstRefund.data.refundOrder.status).toBe('SUCCEEDED');
    } finally {
      processor.refund = original;
    }
    expect(calls.map((c) => c.paymentToken)).toEqual([renewalCharge, firstPayment.processor_token]);
  });

  it("settles a renewal whose answer was lost from the processor's record of its key, keeping that charge's token", async () => {
    const { recurring } = await s.subscribe(3);
    s.clock.advance(HOUR);
    const processor = s.processor();
    const original = processor.chargeToken.bind(processor);
    processor.chargeToken = async (req): Promise<FinalProcessorResult> => {
      await original(req);
      throw new Error('connection reset by the acquirer');
    };
    try {
      await s.services().recurring.chargeDue();
    } finally {
      processor.chargeToken = original;
    }
    const renewalRef = (await s.ordersOf(recurring.id))[1].reference;
    const lost = await paymentOf(renewalRef);
    expect(lost).toMatchObject({ status_id: 3, processor_token: null });
    // Still in flight: the next period's sweep does not charge it again.
    s.clock.advance(HOUR);
    await s.services().recurring.chargeDue();
    expect(await s.ordersOf(recurring.id)).toHaveLength(2);

    await s.sql(`update order_payment set processing_started_at = now() - interval '10 seconds' where reference = ?`, [lost.reference]);
    expect(await s.services().payments.reconcileInterruptedAttempts()).toBe(1);
    expect(await paymentOf(renewalRef)).toMatchObject({ status_id: 5, processor_token: await chargeTokenOf(renewalRef) });
    expect(await s.recurringRow(recurring.id)).toMatchObject({ state: 'active', payments_made: 2 });
    expect(await s.sandboxChargesOf(recurring.id)).toHaveLength(1);
  });

  it('records an approval beyond the number of payments on the renewal (not counted, the subscription completed) instead of failing its settlement', async () => {
    const { recurring } = await s.subscribe(2);
    s.clock.advance(HOUR);
    const processor = s.processor();
    const original = processor.chargeToken.bind(processor);
    // While the renewal is at the processor, its last payment is counted by another settlement.
    processor.chargeToken = async (req): Promise<FinalProcessorResult> => {
      await s.sql(`update recurring_payment set payments_made = number_of_payments where id = ?`, [recurring.id]);
      return original(req);
    };
    try {
      await s.services().recurring.chargeDue();
    } finally {
      processor.chargeToken = original;
    }
    const renewal = (await s.ordersOf(recurring.id))[1];
    expect(renewal.status_id).toBe(5);
    expect(await s.recurringRow(recurring.id)).toMatchObject({ state: 'completed', payments_made: 2, next_charge_at: null });
    const entries = await s.sql(`select event, description from timeline_event where order_id = ? and event like 'subscription.%'`, [renewal.id]);
    expect(entries).toEqual([
      { event: 'subscription.charged_beyond_terms', description: 'Approved beyond the 2 payments of the subscription: not counted, to be refunded' },
    ]);
  });
});
