import { canTransition, PAYMENT_TRANSITIONS, PaymentTransitionError, transition, type PaymentActor } from '../../../src/payments/payment-state';
import { OrderStatus } from '../../../src/orders/order-status';

const ACTORS: PaymentActor[] = ['pay_request', 'processor', 'otp_page', 'paypal_page', 'expiry', 'supersede', 'reconciliation', 'renewal', 'capture', 'void'];
const STATUSES = Object.values(OrderStatus);

describe('payment state machine: who may cause each transition', () => {
  it('only the processor (or its record, on reconciliation) makes a payment Successful, or a confirmed capture of an Authorized one', () => {
    const toSuccess = PAYMENT_TRANSITIONS.filter((t) => t.to === OrderStatus.Successful);
    expect(toSuccess.map((t) => [t.from, t.actor])).toEqual([
      [OrderStatus.Processing, 'processor'],
      [OrderStatus.Processing, 'reconciliation'],
      [OrderStatus.Authorized, 'capture'],
    ]);
  });

  it('the OTP page acts on card payments only, the PayPal page on PayPal payments only', () => {
    expect(canTransition(OrderStatus.PendingAuthentication, OrderStatus.Processing, 'otp_page', 'C')).toBe(true);
    expect(canTransition(OrderStatus.PendingAuthentication, OrderStatus.Processing, 'otp_page', 'PAYPAL')).toBe(false);
    expect(canTransition(OrderStatus.PendingAuthentication, OrderStatus.Processing, 'paypal_page', 'PAYPAL')).toBe(true);
    expect(canTransition(OrderStatus.PendingAuthentication, OrderStatus.Processing, 'paypal_page', 'C')).toBe(false);
    expect(canTransition(OrderStatus.PendingAuthentication, OrderStatus.Processing, 'paypal_page', null)).toBe(false);
    // No page settles anything by itself.
    for (const actor of ['otp_page', 'paypal_page'] as const) {
      for (const to of [OrderStatus.Successful, OrderStatus.Failed]) {
        for (const method of ['C', 'PAYPAL'] as const) expect(canTransition(OrderStatus.PendingAuthentication, to, actor, method)).toBe(false);
      }
    }
  });

  it('Successful, Failed and Voided are final for every actor', () => {
    for (const from of [OrderStatus.Successful, OrderStatus.Failed, OrderStatus.Voided]) {
      for (const to of STATUSES) for (const actor of ACTORS) expect(canTransition(from, to, actor, 'C')).toBe(false);
    }
  });

  it('expiry fails only what is unpaid, claims only what is unauthenticated (releasing a claim it could not close), and voids an uncaptured authorization; supersede only claims what is unauthenticated', () => {
    const expiry = PAYMENT_TRANSITIONS.filter((t) => t.actor === 'expiry');
    expect(expiry.map((t) => [t.from, t.to])).toEqual([
      [OrderStatus.Initiated, OrderStatus.Failed],
      [OrderStatus.PendingAuthentication, OrderStatus.Processing],
      [OrderStatus.Processing, OrderStatus.PendingAuthentication],
      [OrderStatus.Authorized, OrderStatus.Voided],
    ]);
    expect(PAYMENT_TRANSITIONS.filter((t) => t.actor === 'supersede').map((t) => [t.from, t.to])).toEqual([
      [OrderStatus.PendingAuthentication, OrderStatus.Processing],
      [OrderStatus.Processing, OrderStatus.PendingAuthentication],
    ]);
    // An attempt with the processor is never failed by the clock or a newer attempt: only the processor's answer (its close, its record) settles it.
    for (const actor of ['expiry', 'supersede'] as const) {
      for (const to of [OrderStatus.Failed, OrderStatus.Successful, OrderStatus.Authorized])
        expect(canTransition(OrderStatus.Processing, to, actor, 'C')).toBe(false);
      expect(canTransition(OrderStatus.PendingAuthentication, OrderStatus.Failed, actor, 'C')).toBe(false);
    }
  });

  it('a pay request starts an attempt only on an Initiated order', () => {
    for (const from of STATUSES) expect(canTransition(from, OrderStatus.Processing, 'pay_request', 'C')).toBe(from === OrderStatus.Initiated);
  });

  it('a renewal only starts a card charge of a new (Initiated) order; it never settles, expires or fails anything', () => {
    expect(PAYMENT_TRANSITIONS.filter((t) => t.actor === 'renewal')).toEqual([
      { from: OrderStatus.Initiated, to: OrderStatus.Processing, actor: 'renewal', methods: ['C'] },
    ]);
    for (const from of STATUSES) {
      for (const to of STATUSES) {
        const allowed = from === OrderStatus.Initiated && to === OrderStatus.Processing;
        expect(canTransition(from, to, 'renewal', 'C')).toBe(allowed);
        expect(canTransition(from, to, 'renewal', 'PAYPAL')).toBe(false);
      }
    }
  });

  it('lists every move of an authorization: who moves it from which state, with which proof', () => {
    const { Processing, Authorized, Successful, Voided } = OrderStatus;
    const touching = PAYMENT_TRANSITIONS.filter((t) => t.from === Authorized || t.to === Authorized || t.to === Voided);
    expect(touching).toEqual([
      // The processor approved a payment of an order captured later (or its record says so, after a lost answer).
      { from: Processing, to: Authorized, actor: 'processor' },
      { from: Processing, to: Authorized, actor: 'reconciliation' },
      // The merchant's capture, once the processor confirmed it.
      { from: Authorized, to: Successful, actor: 'capture' },
      // The merchant's void, once the processor confirmed the release.
      { from: Authorized, to: Voided, actor: 'void' },
      // The clock: AUTHORIZATION_TTL_HOURS passed without a capture.
      { from: Authorized, to: Voided, actor: 'expiry' },
    ]);
    // Nobody else: no page, pay request, renewal or supersession touches an authorization.
    for (const actor of ['pay_request', 'otp_page', 'paypal_page', 'supersede', 'renewal'] as const) {
      for (const to of STATUSES) {
        expect(canTransition(Authorized, to, actor, 'C')).toBe(false);
        expect(canTransition(Processing, Authorized, actor, 'C')).toBe(false);
      }
    }
    // A capture or a void acts on an Authorized order only, and only toward its own outcome.
    for (const from of STATUSES) {
      for (const to of STATUSES) {
        expect(canTransition(from, to, 'capture', 'C')).toBe(from === Authorized && to === Successful);
        expect(canTransition(from, to, 'void', 'PAYPAL')).toBe(from === Authorized && to === Voided);
      }
    }
  });

  it('transition() changes the status when allowed and throws, changing nothing, when not', () => {
    const payment = { statusId: OrderStatus.PendingAuthentication as number };
    expect(() => transition(payment, OrderStatus.Successful, 'paypal_page', 'C')).toThrow(PaymentTransitionError);
    expect(payment.statusId).toBe(OrderStatus.PendingAuthentication);
    transition(payment, OrderStatus.Processing, 'otp_page', 'C');
    expect(payment.statusId).toBe(OrderStatus.Processing);
  });
});
