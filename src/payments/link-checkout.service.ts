import { validationError } from '../shared/errors';
import type { Clock } from '../shared/clock';
import { randomReference } from '../shared/random';
import type { Tenant } from '../merchants/tenant';
import type { PaymentLink } from '../links/payment-link.entity';
import type { PaymentLinkService } from '../links/payment-link.service';
import type { OrderService } from '../orders/order.service';
import type { PayloadService } from '../crypto/payload.service';
import { InputObject } from '../shared/input';
import type { PaymentService, PayResult } from './payment.service';
import { readPaymentInstrument } from './pay-input';

export interface LinkCheckoutInput {
  amount?: unknown;
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

  async pay(linkReference: string, input: LinkCheckoutInput): Promise<PayResult> {
    const link = await this.links.findPublic(linkReference);
    if (!link) throw validationError('This payment link does not exist.');
    if (!link.isActive) throw validationError('The payment link is not active.');
    const tenant = this.tenantOf(link);
    if (typeof input.data !== 'string' || !input.data) throw validationError('The card details are missing.');
    const secret = InputObject.from(await this.payloads.decrypt(tenant, input.data)).allowOnly(['card', 'paypal']);
    const amount = link.amount ?? input.amount;
    const order = await this.orders.create(
      tenant,
      {
        customer: input.customer,
        order: { amount, reference: randomReference('LNK-', 16), description: link.name, currency: link.currency },
        payment: { redirectUrl: link.website ?? `${this.publicUrl}/pay/${link.reference}/result`, paymentLinkId: link.id },
      },
      { expiresAt: new Date(this.clock.now().getTime() + this.unpaidOrderTimeoutMs) },
    );
    return this.payments.pay(tenant, {
      reference: order.order.reference,
      paymentOption: input.paymentOption,
      country: input.customer?.country ?? null,
      ...readPaymentInstrument(secret),
    });
  }
}
