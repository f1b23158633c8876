import type { PaymentLink } from '../../links/payment-link.entity';
import type { PaymentLinkStatus } from '../../links/link-status';
import { Money } from '../../shared/money';
import type { AuthOptionEnum, CaptureMethodEnum, PaymentLinkCode, PaymentLinkStatusEnum, PaymentLinkType } from './payment-link.types';

/** A payment link as the schema shows it; `status` when already known (else its field resolver asks). */
export function toPaymentLinkType(link: PaymentLink, url: string, status?: PaymentLinkStatus): PaymentLinkType {
  return {
    id: link.id,
    name: link.name,
    description: link.description,
    reference: link.reference,
    isActive: link.isActive,
    status: status as PaymentLinkStatusEnum | undefined,
    amount: link.amount === null ? null : new Money(link.amount).toFixed(2),
    currency: link.currency,
    paymentLinkUrl: url,
    paymentLinkCode: link.type.code as PaymentLinkCode,
    paymentLinkType: link.type.paymentLinkName,
    authOption: link.authOption as AuthOptionEnum,
    captureMethod: link.captureMethod as CaptureMethodEnum,
    limit: link.limit,
    frequencyId: link.frequency?.id ?? null,
    numberOfPayments: link.numberOfPayments,
    logo: link.logo,
    website: link.website,
    mobile: link.mobile,
    backgroundImage: link.backgroundImage,
    appEnvironmentId: typeof link.environment === 'object' ? link.environment.id : (link.environment as number),
    dateCreated: link.dateCreated,
    dateUpdated: link.dateUpdated,
  };
}
