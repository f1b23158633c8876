import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { DomainError, requiredField, unsupported, validationError } from '../shared/errors';
import type { Clock } from '../shared/clock';
import { countryIdOf } from '../shared/countries';
import type { Tenant } from '../merchants/tenant';
import { Order, OrderStatus } from '../orders/order.entity';
import { OrderPayment } from '../orders/order-payment.entity';
import { CardDetail } from '../orders/card-detail.entity';
import { PaymentLink } from '../links/payment-link.entity';
import type { OrderAggregate, OrderService } from '../orders/order.service';
import { orderNotFound, TimelineEvents, type TimelineService } from '../timeline/timeline.service';
import type { OutboxService } from '../events/outbox.service';
import type { OrderStatusChange } from '../events/order-status-bus';
import type { EventFanout } from '../events/event-fanout';
import { randomReference } from '../shared/random';
import { cardBrand, cardFingerprintParts, luhnValid } from './card';
import { trimmedText as text } from '../shared/input';
import { ResponseCodes, type PaymentProcessor, type ProcessorResult } from './processor';
import type { RecurringBillingService } from './recurring-billing.service';

export interface BillingAddressInput {
  street?: string | null;
  city?: string | null;
  state?: string | null;
  country?: string | null;
  zipcode?: string | null;
}

export interface PayOrderInput {
  reference?: string | null;
  paymentOption?: string | null;
  country?: string | null;
  card?: { cardNumber?: string | null; expiryMonth?: string | null; expiryYear?: string | null; cvv?: string | null; billingAddress?: BillingAddressInput | null } | null;
  paypal?: { fullName?: string | null; mobile?: string | null; house?: string | null; billingAddress?: BillingAddressInput | null } | null;
}

export interface PayResult {
  aggregate: OrderAggregate;
  payment: OrderPayment;
  /** Where the customer goes next: the 3-D Secure / PayPal page, or the merchant when final. */
  redirectUrl: string;
  final: boolean;
}

export interface AuthenticationOutcome {
  order: Order;
  redirectUrl: string;
  status: 'successful' | 'failed';
}

export const PAYMENT_OPTION_IDS: Record<string, number> = { C: 2, PAYPAL: 3 };
const PAYMENT_OPTION_LABELS: Record<string, string> = { C: 'Card Payment', PAYPAL: 'PayPal' };

/**
 * The payment state machine: Initiated (1) → pending authentication (2) → Successful (5) or
 * Failed (4). Every transition runs in one transaction holding the order row lock, appends a
 * timeline entry and an outbox event, so concurrent pays, double OTP submits and replays
 * cannot charge twice or move a settled order.
 */
export class PaymentService {
  constructor(
    private readonly orm: MikroORM,
    private readonly processors: { test: PaymentProcessor; live: PaymentProcessor | null },
    private readonly orders: OrderService,
    private readonly timeline: TimelineService,
    private readonly outbox: OutboxService,
    private readonly events: EventFanout,
    private readonly clock: Clock,
    private readonly publicUrl: string,
    private readonly authenticationTimeoutMs: number,
    private readonly recurring?: RecurringBillingService,
  ) {}

  async pay(tenant: Tenant, input: PayOrderInput): Promise<PayResult> {
    const reference = text(input.reference);
    if (!reference) throw requiredField('Reference');
    const option = text(input.paymentOption)?.toUpperCase();
    if (!option) throw validationError('payment option is required!');
    if (!(option in PAYMENT_OPTION_IDS)) throw unsupported('PaymentOption');
    const country = text(input.country)?.toUpperCase();
    if (!country) throw requiredField('Country');
    if (!countryIdOf(country)) throw new DomainError('unsupported', 'Customer country is currently not supported.', '100');

    let card: ValidCard | null = null;
    if (option === 'C') {
      if (!input.card) throw requiredField('Card');
      card = this.validateCard(input.card);
    } else {
      if (!input.paypal) throw requiredField('Paypal');
      if (!text(input.paypal.fullName)) throw requiredField('FullName');
      if (!text(input.paypal.mobile)) throw requiredField('Mobile');
      validateBillingAddress(input.paypal.billingAddress);
    }

    const processor = tenant.mode === 'test' ? this.processors.test : this.processors.live;
    if (!processor) throw new DomainError('unsupported', 'Live payments are currently not supported.', 'VAL400');

    const changes: OrderStatusChange[] = [];
    const result = await this.orm.em.fork().transactional(async (em) => {
      const order = await em.findOne(Order, { environment: tenant.environmentId, reference }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!order) throw orderNotFound();
      await em.populate(order, ['customer', 'paymentLink', 'paymentLink.type']);
      this.assertPayable(order);
      const link = order.paymentLink ? await this.lockLinkAndCheck(em, order, false) : null;
      const threeDSecure = link?.authOption !== 'NOAUTH';

      const now = this.clock.now();
      const payment = em.create(OrderPayment, {
        order,
        reference: randomReference('OP', 20),
        paymentOptionId: PAYMENT_OPTION_IDS[option]!,
        paymentOption: PAYMENT_OPTION_LABELS[option]!,
        statusId: OrderStatus.PendingAuthentication,
        responseCode: ResponseCodes.pending.code,
        responseMessage: ResponseCodes.pending.message,
        amount: order.totalChargedAmount,
        fee: order.fee,
      });
      order.paymentMethod = option;

      let outcome: ProcessorResult;
      if (card) {
        outcome = await processor.authorizeCard({
          ...card.secret,
          expiryMonth: card.expiryMonth,
          expiryYear: card.expiryYear,
          amount: order.totalChargedAmount,
          currency: order.currency,
          reference: order.processorReference,
          environmentId: tenant.environmentId,
          threeDSecure,
        }, em);
        em.create(CardDetail, {
          orderPayment: payment,
          environment: order.environment,
          status: false,
          country,
          cardToken: outcome.token,
          cardExpiryMonth: card.expiryMonth,
          cardExpiryYear: card.expiryYear,
          cardType: card.brand,
          cardIssuer: outcome.issuer,
          cardFirstSixDigits: card.firstSix,
          cardLastFourDigits: card.lastFour,
        });
        payment.instrument = `${card.brand} ${card.firstSix}******${card.lastFour}`;
      } else {
        const { token } = await processor.startPaypal({ amount: order.totalChargedAmount, currency: order.currency, reference: order.processorReference, environmentId: tenant.environmentId }, em);
        outcome = { kind: 'challenge', token, issuer: 'PayPal' };
        payment.instrument = 'PayPal';
      }
      payment.processorToken = outcome.token;
      this.timeline.record(em, order, TimelineEvents.paymentInitiated, 'system', `${PAYMENT_OPTION_LABELS[option]} started`, { orderPaymentReference: payment.reference });

      if (outcome.kind === 'challenge') {
        payment.authenticationExpiresAt = new Date(now.getTime() + this.authenticationTimeoutMs);
        order.statusId = OrderStatus.PendingAuthentication;
        order.paymentResponseCode = ResponseCodes.pending.code;
        order.paymentResponseMessage = ResponseCodes.pending.message;
        await em.flush();
        const aggregate = await this.orders.aggregateOf(em, order, tenant.subsidiaryId);
        changes.push(await this.outbox.recordOrderChange(em, aggregate, 'pending'));
        const path = option === 'C' ? 'sandbox/3ds' : 'sandbox/paypal';
        return { aggregate, payment, redirectUrl: `${this.publicUrl}/${path}/${payment.reference}`, final: false };
      }
      const aggregate = await this.settle(em, order, payment, outcome, changes, tenant.subsidiaryId);
      return { aggregate, payment, redirectUrl: merchantRedirect(order), final: true };
    });
    this.events.afterCommit(changes);
    return result;
  }

  /** Public: the 3-D Secure / PayPal pages look up the pending payment by its unguessable reference. */
  async findPendingPage(paymentReference: string): Promise<{ order: Order; payment: OrderPayment; merchantName: string } | null> {
    const em = this.orm.em.fork();
    const payment = await em.findOne(OrderPayment, { reference: paymentReference }, { populate: ['order', 'order.environment', 'order.environment.subsidiary'] });
    if (!payment) return null;
    return { order: payment.order, payment, merchantName: payment.order.environment.subsidiary.name };
  }

  /** The cardholder answered the 3-D Secure page (otp) or the PayPal page (approve/cancel). */
  async completeAuthentication(paymentReference: string, answer: { otp: string } | { approve: boolean }): Promise<AuthenticationOutcome | null> {
    const changes: OrderStatusChange[] = [];
    const outcome = await this.orm.em.fork().transactional(async (em) => {
      const found = await em.findOne(OrderPayment, { reference: paymentReference }, { populate: ['order'] });
      if (!found) return null;
      // Lock order first, then payment: the same order as pay() and the expiry sweep.
      const order = await em.findOneOrFail(Order, { id: found.order.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      const payment = await em.findOneOrFail(OrderPayment, { id: found.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      await em.populate(order, ['environment', 'paymentLink', 'paymentLink.type', 'customer']);
      const subsidiaryId = order.environment.subsidiary.id;
      if (payment.statusId !== OrderStatus.PendingAuthentication) {
        // Already answered (double submit, replay): report what happened, change nothing.
        return { order, redirectUrl: merchantRedirect(order), status: order.statusId === OrderStatus.Successful ? 'successful' : 'failed' } as AuthenticationOutcome;
      }
      const processor = order.environment.mode === 'test' ? this.processors.test : this.processors.live!;
      let result: Exclude<ProcessorResult, { kind: 'challenge' }>;
      if (payment.authenticationExpiresAt && payment.authenticationExpiresAt.getTime() <= this.clock.now().getTime()) {
        result = { kind: 'declined', token: payment.processorToken, issuer: '', ...ResponseCodes.authenticationExpired };
      } else if ('otp' in answer) {
        result = await processor.completeChallenge(payment.processorToken!, answer.otp, em);
      } else {
        result = await processor.completePaypal(payment.processorToken!, answer.approve, em);
      }
      const passed = result.code !== ResponseCodes.authenticationFailed.code && result.code !== ResponseCodes.authenticationExpired.code && result.code !== ResponseCodes.customerCancelled.code;
      this.timeline.record(
        em,
        order,
        passed ? TimelineEvents.authenticationPassed : TimelineEvents.authenticationFailed,
        'system',
        passed ? 'Customer authenticated' : result.message,
        { orderPaymentReference: payment.reference },
      );
      if (passed && result.kind === 'approved' && order.paymentLink) {
        // Re-check the link's rules under its lock: another customer may have used it up meanwhile.
        try {
          await this.lockLinkAndCheck(em, order, true);
        } catch {
          result = { kind: 'declined', token: result.token, issuer: result.issuer, ...ResponseCodes.linkExhausted };
        }
      }
      await this.settle(em, order, payment, result, changes, subsidiaryId);
      return { order, redirectUrl: merchantRedirect(order), status: result.kind === 'approved' ? 'successful' : 'failed' } as AuthenticationOutcome;
    });
    this.events.afterCommit(changes);
    return outcome;
  }

  /**
   * Fails every authentication left unfinished past its deadline, exactly like any other
   * failure. Safe with several instances: each payment is settled under its row lock, once.
   */
  async expireStaleAuthentications(limit = 100): Promise<number> {
    const now = this.clock.now();
    const rows: Array<{ reference: string }> = await this.orm.em.getConnection().execute(
      `select reference from order_payment where status_id = 2 and authentication_expires_at <= ? order by authentication_expires_at limit ?`,
      [now, limit],
    );
    let expired = 0;
    for (const { reference } of rows) {
      const outcome = await this.completeAuthentication(reference, { otp: '' });
      if (outcome) expired += 1;
    }
    return expired;
  }

  private async settle(
    em: EntityManager,
    order: Order,
    payment: OrderPayment,
    result: Exclude<ProcessorResult, { kind: 'challenge' }>,
    changes: OrderStatusChange[],
    subsidiaryId: number,
  ): Promise<OrderAggregate> {
    const now = this.clock.now();
    const approved = result.kind === 'approved';
    const statusId = approved ? OrderStatus.Successful : OrderStatus.Failed;
    payment.statusId = statusId;
    payment.responseCode = result.code;
    payment.responseMessage = result.message;
    payment.authenticationExpiresAt = null;
    order.statusId = statusId;
    order.paymentResponseCode = result.code;
    order.paymentResponseMessage = result.message;
    order.providerResponseDate = now;
    if (approved) order.datePaymentConfirmed = now;
    const card = await em.findOne(CardDetail, { orderPayment: payment });
    if (card) card.status = approved;
    if (approved && this.recurring) await this.recurring.setUp(em, order, payment);
    this.timeline.record(em, order, approved ? TimelineEvents.settled : TimelineEvents.failed, 'system', approved ? 'Payment successful' : `Payment failed: ${result.message}`, {
      responseCode: result.code,
    });
    await em.flush();
    const aggregate = await this.orders.aggregateOf(em, order, subsidiaryId);
    changes.push(await this.outbox.recordOrderChange(em, aggregate, approved ? 'successful' : 'failed'));
    await em.flush();
    return aggregate;
  }

  private assertPayable(order: Order): void {
    if (order.statusId === OrderStatus.Successful) throw validationError('The order has already been paid.');
    if (order.statusId === OrderStatus.Failed) throw validationError('The order has failed; create a new order to pay again.');
    if (order.statusId === OrderStatus.PendingAuthentication) throw new DomainError('conflict', 'A payment of this order is already awaiting authentication.', 'VAL400');
  }

  /**
   * Link rules (SC: one successful payment; Limit: number of paying customers; inactive: none),
   * checked under the link's row lock so concurrent payments on one link are serialised.
   */
  private async lockLinkAndCheck(em: EntityManager, order: Order, settling: boolean): Promise<PaymentLink> {
    const link = await em.findOneOrFail(PaymentLink, { id: order.paymentLink!.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, populate: ['type'] });
    if (!link.isActive) throw validationError('The payment link is not active.');
    // Count settled payments, plus (before settling) the ones still awaiting authentication.
    const statuses = settling ? [OrderStatus.Successful] : [OrderStatus.Successful, OrderStatus.PendingAuthentication];
    const rows: Array<{ orders: string; customers: string; mine: string }> = await em.getConnection().execute(
      `select count(*) as orders, count(distinct customer_id) as customers,
              count(*) filter (where customer_id = ?) as mine
         from checkout_order where payment_link_id = ? and status_id in (${statuses.join(',')}) and id <> ?`,
      [order.customer?.id ?? 0, link.id, order.id],
      'all',
      em.getTransactionContext(),
    );
    const { orders, customers, mine } = rows[0]!;
    if (link.type.code === 'SC' && Number(orders) > 0) throw validationError('This payment link has already been paid.');
    if (link.limit !== null && Number(customers) >= link.limit && Number(mine) === 0) {
      throw validationError('This payment link has reached its limit of paying customers.');
    }
    return link;
  }

  private validateCard(c: NonNullable<PayOrderInput['card']>): ValidCard {
    const number = (text(c.cardNumber) ?? '').replace(/[\s-]/g, '');
    if (!number) throw requiredField('CardNumber');
    if (!luhnValid(number)) throw validationError('The CardNumber field is not a valid card number.');
    const month = text(c.expiryMonth);
    if (!month) throw requiredField('ExpiryMonth');
    if (!/^(0[1-9]|1[0-2])$/.test(month)) throw validationError('The ExpiryMonth field must be two digits from 01 to 12.');
    const year = text(c.expiryYear);
    if (!year) throw requiredField('ExpiryYear');
    if (!/^\d{2}$/.test(year)) throw validationError('The ExpiryYear field must be two digits.');
    const now = this.clock.now();
    const expiry = Date.UTC(2000 + Number(year), Number(month), 1); // first instant after the expiry month
    if (expiry <= now.getTime()) throw validationError('The card has expired.');
    const cvv = text(c.cvv);
    if (!cvv) throw requiredField('Cvv');
    if (!/^\d{3,4}$/.test(cvv)) throw validationError('The Cvv field must be 3 or 4 digits.');
    validateBillingAddress(c.billingAddress);
    const { firstSix, lastFour } = cardFingerprintParts(number);
    return { secret: { cardNumber: number, cvv }, expiryMonth: month, expiryYear: year, brand: cardBrand(number), firstSix, lastFour };
  }
}

interface ValidCard {
  /** Never stored, logged or returned: handed to the processor and dropped. */
  secret: { cardNumber: string; cvv: string };
  expiryMonth: string;
  expiryYear: string;
  brand: string;
  firstSix: string;
  lastFour: string;
}

function validateBillingAddress(a: BillingAddressInput | null | undefined): void {
  if (!a) throw requiredField('BillingAddress');
  if (!text(a.street)) throw requiredField('Street');
  if (!text(a.city)) throw requiredField('City');
  const country = text(a.country)?.toUpperCase();
  if (!country) throw requiredField('Country');
  if (!/^[A-Z]{2}$/.test(country)) throw validationError('The Country field of the billing address must be an ISO 3166-1 alpha-2 code.');
}

/** The merchant's RedirectUrl with `reference` and `status` added (contract section 5). */
export function merchantRedirect(order: Order): string {
  const url = new URL(order.redirectUrl);
  url.searchParams.set('reference', order.reference);
  url.searchParams.set('status', order.statusId === OrderStatus.Successful ? 'successful' : 'failed');
  return url.toString();
}
