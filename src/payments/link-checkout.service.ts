import { DomainError, requiredField, validationError } from '../shared/errors';
import { currencyOf, Money, parseAmount } from '../shared/money';
import { linkTermsVersion } from '../links/link-terms';
import type { Clock } from '../shared/clock';
import { randomReference } from '../shared/random';
import type { Tenant } from '../merchants/tenant';
import type { PaymentLink } from '../links/payment-link.entity';
import type { PaymentLinkService } from '../links/payment-link.service';
import type { OrderService } from '../orders/order.service';
import type { PayloadService } from '../merchants/payload.service';
import { InputObject } from '../shared/input';
import type { PaymentService, PayResult } from './payment.service';
import { readPaymentInstrument, validatePayment } from './pay-validation';
import { linkRefusal } from '../links/link-status';
import type { FeeService } from '../fees/fee.service';
import { paymentLinkResultUrl } from '../links/payment-link-url';
import { OrderStatus } from '../orders/order-status';

export interface LinkCheckoutInput {
  /** The amount the customer typed, or the fixed amount their page showed. */
  amount?: unknown;
  /** The version of the link's terms their page showed (linkTermsVersion); absent: not checked. */
  terms?: unknown;
  paymentOption?: string | null;
  customer?: { firstname?: string | null; lastname?: string | null; email?: string | null; mobile?: string | null; country?: string | null } | null;
  /** The card or PayPal part, encrypted in the browser under the merchant's encryption key. */
  data?: string | null;
}

/**
 * A customer paying through a payment link's hosted page: the order is created on the link
 * (so every link rule applies) and paid, in the merchant's environment, by the same services
 * the API uses.
 */
export class LinkCheckoutService {
  constructor(
    private readonly links: PaymentLinkService,
    private readonly orders: OrderService,
    private readonly payments: PaymentService,
    private readonly payloads: PayloadService,
    private readonly fees: FeeService,
    private readonly publicUrl: string,
    private readonly clock: Clock,
    /** An order made here and left unpaid (a payment refused, a page abandoned) fails after this. */
    private readonly unpaidOrderTimeoutMs: number,
  ) {}

  async findLink(reference: string): Promise<PaymentLink | null> {
    return this.links.findPublic(reference);
  }

  tenantOf(link: PaymentLink): Tenant {
    return { environmentId: link.environment.id, subsidiaryId: link.environment.subsidiary.id, mode: link.environment.mode, keyKind: 'public' };
  }

  /**
   * Everything that can refuse the attempt is checked before the order is created: the link's
   * status (not disabled, paid or at its limit), how the customer pays (option, card or PayPal
   * details), the option's rules for the amount (turned on, at least its minimum), then the
   * customer details as the order is made. A refused attempt leaves no order behind. Answers
   * where the customer goes next.
   */
  async pay(linkReference: string, input: LinkCheckoutInput): Promise<Pick<PayResult, 'redirectUrl'>> {
    const link = await this.links.findPublic(linkReference);
    if (!link) throw validationError('This payment link does not exist.');
    const status = await this.links.status(link);
    if (status !== 'ACTIVE') throw linkRefusal(status);
    const tenant = this.tenantOf(link);
    if (typeof input.data !== 'string' || !input.data) throw validationError('The card details are missing.');
    const secret = InputObject.from(await this.payloads.decrypt(tenant, input.data)).allowOnly(['card', 'paypal']);
    const payment = { paymentOption: input.paymentOption, country: input.customer?.country ?? null, ...readPaymentInstrument(secret) };
    if (!input.customer) throw requiredField('Customer');
    const { method } = validatePayment(payment, this.clock.now());
    assertTermsShown(link, input);
    const amount = link.amount ?? input.amount;
    const parsed = amount === undefined || amount === null || amount === '' ? null : parseAmount(amount, currencyOf(link.currency)?.minorUnits);
    // An amount that is not one is refused by the order's own checks, below, before anything is written.
    if (parsed !== null && typeof parsed !== 'string') await this.fees.assertPayable(tenant, parsed, method, link.currency);

    const order = await this.orders.create(
      tenant,
      {
        customer: input.customer,
        order: { amount, reference: randomReference('LNK-', 16), description: link.name, currency: link.currency },
        payment: { redirectUrl: link.website ?? paymentLinkResultUrl(this.publicUrl, link.reference), paymentLinkId: link.id },
      },
      { expiresAt: new Date(this.clock.now().getTime() + this.unpaidOrderTimeoutMs) },
    );
    try {
      return await this.payments.pay(tenant, { reference: order.order.reference, ...payment });
    } catch (err) {
      if (err instanceof DomainError || !(await this.attemptRecorded(tenant, order.order.reference))) throw err;
      // The payment may be with the processor (its call timed out, its answer was lost): the
      // customer is sent to this order's result page, which shows it in progress and then its
      // outcome; never back to the form, where paying again would make and charge a second order.
      this.onFault(err, order.order.reference);
      const result = new URL(paymentLinkResultUrl(this.publicUrl, link.reference));
      result.searchParams.set('reference', order.order.reference);
      return { redirectUrl: result.toString() };
    }
  }

  /**
   * Whether the order's payment attempt was recorded (it left Initiated), so its call may have
   * reached the processor; true when that cannot be read now (the result page is the safe answer).
   */
  private async attemptRecorded(tenant: Tenant, reference: string): Promise<boolean> {
    try {
      return (await this.orders.getAggregate(tenant, reference)).order.statusId !== OrderStatus.Initiated;
    } catch {
      return true;
    }
  }

  /** Hears a pay that failed after its order was made (the customer was sent to the order's result page); set by the composition root to log it. */
  onFault: (err: unknown, orderReference: string) => void = () => undefined;
}

const LINK_CHANGED = 'This payment link changed since this page was shown: reload the page to see what you would pay.';

/**
 * Refuses a payment whose page showed other terms than the link has now (the merchant edited
 * it in between): another version of the terms, or an amount other than the link's fixed one.
 * Nobody is charged an amount, or without the authentication, they were not shown.
 */
function assertTermsShown(link: PaymentLink, input: LinkCheckoutInput): void {
  if (input.terms !== undefined && input.terms !== null && input.terms !== linkTermsVersion(link)) throw validationError(LINK_CHANGED);
  if (link.amount === null || input.amount === undefined || input.amount === null || input.amount === '') return;
  const shown = parseAmount(input.amount, currencyOf(link.currency)?.minorUnits);
  if (typeof shown === 'string' || !shown.eq(new Money(link.amount))) throw validationError(LINK_CHANGED);
}
