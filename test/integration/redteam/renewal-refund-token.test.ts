import { HOUR, useSubscriptionService } from './support';
import type { RefundRequest } from '../../../src/payments/processor';

const REFUND = `mutation ($input: RefundOrderInput!) { refundOrder(input: $input) { id amount status failureReason } }`;

/**
 * A renewal is charged with chargeToken, which answers the token of that charge. The renewal's
 * payment is begun with processorToken = the subscription's saved-card token, and settlement keeps
 * a token already set (attempt-rules.ts takeProcessorDetails), so the renewal's payment never
 * records the token of its own charge. A refund of the renewal then names the FIRST payment.
 */
describe('red team: refunds of renewal orders', () => {
  const s = useSubscriptionService('rt_renewal_refund');

  it("a renewal's refund is sent to the processor against the renewal's own charge, not the first payment", async () => {
    const { reference, recurring } = await s.subscribe(3);
    s.clock.advance(HOUR);
    expect(await s.services().recurring.chargeDue()).toBe(1);
    const orders = await s.ordersOf(recurring.id);
    expect(orders.map((o: { status_id: number }) => o.status_id)).toEqual([5, 5]);
    const renewalRef = orders[1].reference;

    // What the processor answered the renewal's charge with: the processor's token of that payment.
    const [charge] = await s.sql(
      `select a.token from sandbox_authorization a join order_payment p on p.reference = a.idempotency_key
         join checkout_order o on o.id = p.order_id where o.reference = ? and a.kind = 'charge'`,
      [renewalRef],
    );
    const [firstPayment] = await s.sql(
      `select p.processor_token from order_payment p join checkout_order o on o.id = p.order_id where o.reference = ? and p.status_id = 5`,
      [reference],
    );

    // Note every refund call the processor receives.
    const processor = s.processor();
    const calls: RefundRequest[] = [];
    const original = processor.refund.bind(processor);
    processor.refund = async (req) => {
      calls.push(req);
      return original(req);
    };
    try {
      // The customer is refunded the renewal (period 2) and the first payment (period 1), each in full.
      const renewalRefund = await s.gql(REFUND, { input: { reference: renewalRef } });
      expect(renewalRefund.data.refundOrder.status).toBe('SUCCEEDED');
      const firstRefund = await s.gql(REFUND, { input: { reference } });
      expect(firstRefund.data.refundOrder.status).toBe('SUCCEEDED');
    } finally {
      processor.refund = original;
    }

    // Each refund must name the payment it gives back: two different processor payments.
    expect({ renewalRefundedPayment: calls[0]!.paymentToken, firstRefundedPayment: calls[1]!.paymentToken }).toEqual({
      renewalRefundedPayment: charge.token,
      firstRefundedPayment: firstPayment.processor_token,
    });
  });
});
