import { moneyNumber } from '../shared/money';
import { formatTimestamp } from '../shared/time';
import type { PaymentLink } from './payment-link.entity';

/**
 * The Payment link resource of the legacy interface. In create/edit answers `paymentType` is
 * null and the type is in `paymentLinkType`/`paymentLinkCode`; in the list it is the other
 * way round (as observed from the original service).
 */
export function paymentLinkView(link: PaymentLink, paymentLinkUrl: string, style: 'single' | 'list') {
  const typeName = link.type.paymentLinkName;
  return {
    id: link.id,
    name: link.name,
    paymentType: style === 'list' ? typeName : null,
    logo: link.logo,
    amount: moneyNumber(link.amount),
    dateCreated: formatTimestamp(link.dateCreated),
    reference: link.reference,
    createdBy: null,
    creatorEmail: null,
    isActive: link.isActive,
    currency: link.currency,
    limit: link.limit,
    paymentLinkUrl,
    appEnvironmentId: typeof link.environment === 'object' ? link.environment.id : link.environment,
    paymentLinkType: style === 'list' ? null : typeName,
    paymentLinkCode: style === 'list' ? null : link.type.code,
    description: link.description,
  };
}
