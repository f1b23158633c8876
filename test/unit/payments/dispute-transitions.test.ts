import {
  canTransitionDispute,
  DISPUTE_TRANSITIONS,
  DisputeTransitionError,
  newDisputeStatus,
  OPEN_DISPUTE_STATUSES,
  transitionDispute,
  type DisputeActor,
  type DisputeStatus,
} from '../../../src/payments/payment-state';
import { disputeOpening } from '../../../src/payments/dispute-opening';
import { OrderStatus } from '../../../src/orders/order-status';
import { Money } from '../../../src/shared/money';

const ACTORS: DisputeActor[] = ['processor', 'merchant', 'expiry'];
const STATUSES: DisputeStatus[] = ['NEEDS_RESPONSE', 'UNDER_REVIEW', 'WON', 'LOST', 'ACCEPTED'];

describe('dispute state machine: who may move a dispute from which state', () => {
  it('lists every allowed move: the processor opens and decides, the merchant answers once, the deadline loses an unanswered dispute', () => {
    expect(DISPUTE_TRANSITIONS.map((t) => `${t.from ?? 'none'} -> ${t.to} by ${t.actor}`)).toEqual([
      'none -> NEEDS_RESPONSE by processor',
      'NEEDS_RESPONSE -> UNDER_REVIEW by merchant',
      'NEEDS_RESPONSE -> ACCEPTED by merchant',
      'NEEDS_RESPONSE -> LOST by expiry',
      'NEEDS_RESPONSE -> WON by processor',
      'NEEDS_RESPONSE -> LOST by processor',
      'UNDER_REVIEW -> WON by processor',
      'UNDER_REVIEW -> LOST by processor',
    ]);
  });

  it('only the processor opens a dispute, and always NEEDS_RESPONSE', () => {
    expect(newDisputeStatus('processor')).toBe('NEEDS_RESPONSE');
    for (const actor of ['merchant', 'expiry'] as const) expect(() => newDisputeStatus(actor)).toThrow(DisputeTransitionError);
    for (const to of STATUSES) for (const actor of ACTORS) expect(canTransitionDispute(null, to, actor)).toBe(to === 'NEEDS_RESPONSE' && actor === 'processor');
  });

  it('the merchant never decides: it may only answer a dispute that needs a response, with evidence or by accepting it', () => {
    const moves = DISPUTE_TRANSITIONS.filter((t) => t.actor === 'merchant');
    expect(moves.every((t) => t.from === 'NEEDS_RESPONSE')).toBe(true);
    expect(moves.map((t) => t.to).sort()).toEqual(['ACCEPTED', 'UNDER_REVIEW']);
    expect(canTransitionDispute('NEEDS_RESPONSE', 'WON', 'merchant')).toBe(false);
    // Once evidence went in, the decision is the processor's: no accepting it any more.
    expect(canTransitionDispute('UNDER_REVIEW', 'ACCEPTED', 'merchant')).toBe(false);
    expect(canTransitionDispute('UNDER_REVIEW', 'UNDER_REVIEW', 'merchant')).toBe(false);
  });

  it('only the processor decides a dispute under review; the clock only loses one left unanswered', () => {
    for (const to of ['WON', 'LOST'] as const) {
      expect(canTransitionDispute('UNDER_REVIEW', to, 'processor')).toBe(true);
      expect(canTransitionDispute('UNDER_REVIEW', to, 'expiry')).toBe(false);
      expect(canTransitionDispute('UNDER_REVIEW', to, 'merchant')).toBe(false);
    }
    expect(DISPUTE_TRANSITIONS.filter((t) => t.actor === 'expiry')).toEqual([{ from: 'NEEDS_RESPONSE', to: 'LOST', actor: 'expiry' }]);
  });

  it('WON, LOST and ACCEPTED are final for every actor', () => {
    for (const from of ['WON', 'LOST', 'ACCEPTED'] as const)
      for (const to of STATUSES) for (const actor of ACTORS) expect(canTransitionDispute(from, to, actor)).toBe(false);
    const dispute = { status: 'LOST' as DisputeStatus };
    expect(() => transitionDispute(dispute, 'WON', 'processor')).toThrow(DisputeTransitionError);
    expect(dispute.status).toBe('LOST');
  });

  it("refuses a merchant's move with DISPUTE_NOT_OPEN, and moves a dispute when the table allows it", () => {
    const answered = { status: 'UNDER_REVIEW' as DisputeStatus };
    expect(() => transitionDispute(answered, 'ACCEPTED', 'merchant')).toThrow(expect.objectContaining({ code: 'DISPUTE_NOT_OPEN' }));
    const open = { status: 'NEEDS_RESPONSE' as DisputeStatus };
    transitionDispute(open, 'UNDER_REVIEW', 'merchant');
    expect(open.status).toBe('UNDER_REVIEW');
  });

  it('a dispute holds the money (no refund) while it needs a response or is under review', () => {
    expect(OPEN_DISPUTE_STATUSES).toEqual(['NEEDS_RESPONSE', 'UNDER_REVIEW']);
  });
});

describe('which processor notice may open a dispute on a known payment, and for how much', () => {
  const order = { currency: 'NGN', statusId: OrderStatus.Successful };
  const notice = { currency: 'NGN', amount: '250.00' };
  const left = new Money('1000');

  it("refuses a notice in another currency than the order's, whatever the case of the codes", () => {
    for (const currency of ['USD', 'NGNX', '']) expect(disputeOpening(order, { ...notice, currency }, left)).toEqual({ refused: 'currency_mismatch' });
    expect(disputeOpening(order, { ...notice, currency: 'ngn' }, left)).toEqual({ amount: new Money('250') });
  });

  it('refuses a notice on an order whose payment was not captured: only a Successful order is disputed', () => {
    for (const statusId of Object.values(OrderStatus)) {
      const opened = disputeOpening({ ...order, statusId }, notice, left);
      expect(opened).toEqual(statusId === OrderStatus.Successful ? { amount: new Money('250') } : { refused: 'payment_not_captured' });
    }
  });

  it('refuses an amount that is not a positive number of cents, rather than rounding it', () => {
    for (const amount of ['0.001', '10.005', '0', '0.00', '-5', 'ten', '', '1e3x', '1000000000000'])
      expect(disputeOpening(order, { ...notice, amount }, left)).toEqual({ refused: 'amount_invalid' });
    expect(disputeOpening(order, { ...notice, amount: '0.01' }, left)).toEqual({ amount: new Money('0.01') });
    expect(disputeOpening(order, { ...notice, amount: '12.5' }, left)).toEqual({ amount: new Money('12.50') });
  });

  it('refuses an amount over what the order has left to dispute, to the cent', () => {
    expect(disputeOpening(order, { ...notice, amount: '1000.00' }, left)).toEqual({ amount: new Money('1000') });
    expect(disputeOpening(order, { ...notice, amount: '1000.01' }, left)).toEqual({ refused: 'amount_over_balance' });
    expect(disputeOpening(order, { ...notice, amount: '0.01' }, new Money(0))).toEqual({ refused: 'amount_over_balance' });
  });
});
