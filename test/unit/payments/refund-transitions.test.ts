import {
  canTransitionRefund,
  newRefundStatus,
  REFUND_TRANSITIONS,
  REFUNDABLE_ORDER_STATUSES,
  RefundTransitionError,
  transitionRefund,
  type RefundActor,
  type RefundStatus,
} from '../../../src/payments/payment-state';
import { OrderStatus } from '../../../src/orders/order-status';

const ACTORS: RefundActor[] = ['refund_request', 'processor', 'reconciliation'];
const STATUSES: RefundStatus[] = ['PENDING', 'SUCCEEDED', 'FAILED'];

describe('refund state machine: who may move a refund from which state', () => {
  it('lists every allowed move: a request creates a PENDING refund; the processor, or its record on reconciliation, settles it', () => {
    expect(REFUND_TRANSITIONS.map((t) => `${t.from ?? 'none'} -> ${t.to} by ${t.actor}`)).toEqual([
      'none -> PENDING by refund_request',
      'PENDING -> SUCCEEDED by processor',
      'PENDING -> FAILED by processor',
      'PENDING -> SUCCEEDED by reconciliation',
      'PENDING -> FAILED by reconciliation',
    ]);
  });

  it('only a refund request creates a refund, and always PENDING (never settled before the processor answers)', () => {
    expect(newRefundStatus('refund_request')).toBe('PENDING');
    for (const actor of ['processor', 'reconciliation'] as const) expect(() => newRefundStatus(actor)).toThrow(RefundTransitionError);
    for (const to of ['SUCCEEDED', 'FAILED'] as const) for (const actor of ACTORS) expect(canTransitionRefund(null, to, actor)).toBe(false);
  });

  it('a request never settles a refund: only the processor or its record makes it SUCCEEDED or FAILED', () => {
    for (const to of STATUSES) expect(canTransitionRefund('PENDING', to, 'refund_request')).toBe(false);
    const settlers = REFUND_TRANSITIONS.filter((t) => t.to === 'SUCCEEDED' || t.to === 'FAILED');
    expect(new Set(settlers.map((t) => t.actor))).toEqual(new Set(['processor', 'reconciliation']));
    expect(settlers.every((t) => t.from === 'PENDING')).toBe(true);
  });

  it('SUCCEEDED and FAILED are final for every actor', () => {
    for (const from of ['SUCCEEDED', 'FAILED'] as const) {
      for (const to of STATUSES) for (const actor of ACTORS) expect(canTransitionRefund(from, to, actor)).toBe(false);
    }
    const refund = { status: 'FAILED' as RefundStatus };
    expect(() => transitionRefund(refund, 'SUCCEEDED', 'processor')).toThrow(RefundTransitionError);
    expect(refund.status).toBe('FAILED');
  });

  it('moves a PENDING refund when the table allows it', () => {
    const refund = { status: 'PENDING' as RefundStatus };
    transitionRefund(refund, 'SUCCEEDED', 'reconciliation');
    expect(refund.status).toBe('SUCCEEDED');
  });

  it('a refund may be asked of a Successful order only', () => {
    expect(REFUNDABLE_ORDER_STATUSES).toEqual([OrderStatus.Successful]);
  });
});
