import type { EntityManager } from '@mikro-orm/postgresql';
import { requiredField, unsupported, validationError } from '../shared/errors';
import { amountError, currencyOf, parseAmount } from '../shared/money';
import { isHttpUrl } from '../shared/validation';
import { trimmedText as text } from '../shared/input';
import type { AuthOption } from './payment-link.entity';
import { PaymentLinkType } from './payment-link-type.entity';
import { Frequency } from './frequency.entity';
import { readCaptureMethod, type CaptureMethod } from './capture-method';

/** Link input as both adapters hand it over; every rule about it lives here. */
export interface PaymentLinkInput {
  name?: string | null;
  description?: string | null;
  paymentType?: string | null;
  currency?: string | null;
  authOption?: string | null;
  amount?: string | number | null;
  mobile?: string | null;
  backgroundImage?: string | null;
  website?: string | null;
  limit?: string | number | null;
  /** Subscription links only: the charge frequency (default monthly) and the number of payments (default 12). */
  frequencyId?: string | number | null;
  numberOfPayments?: string | number | null;
  /** When creating: AUTOMATIC (default) or MANUAL (docs/capture.md); subscription links are AUTOMATIC. */
  captureMethod?: string | null;
}

/** A subscription link made without its terms charges monthly, twelve times. */
export const DEFAULT_SUBSCRIPTION_TERMS = { frequencyId: 6, numberOfPayments: 12 } as const;
export const MAX_NUMBER_OF_PAYMENTS = 1000;

export interface ValidLinkInput {
  name: string;
  description: string;
  typeId: number;
  isSubscription: boolean;
  /** Only when creating. */
  currency: string | null;
  authOption: AuthOption | undefined;
  amount: string | null;
  limit: number | null;
  mobile: string | null;
  backgroundImage: string | null;
  website: string | null;
  /** A subscription link's terms as given (null: not given); always null for other links. */
  frequencyId: number | null;
  numberOfPayments: number | null;
  /** Only when creating. */
  captureMethod: CaptureMethod;
}

const given = (value: unknown) => value !== null && value !== undefined && String(value).trim() !== '';

/** A whole number from 1 to `max`, or null when absent. */
export function wholeNumber(value: unknown, field: string, max: number): number | null {
  if (!given(value)) return null;
  const t = typeof value === 'number' || typeof value === 'string' ? String(value).trim() : '';
  if (!/^\d{1,10}$/.test(t) || Number(t) < 1 || Number(t) > max) throw validationError(`The ${field} field must be a whole number from 1 to ${max}.`);
  return Number(t);
}

export async function validateLinkInput(em: EntityManager, input: PaymentLinkInput, { creating }: { creating: boolean }): Promise<ValidLinkInput> {
  const name = text(input.name);
  if (!name) throw requiredField('Name');
  if (name.length > 200) throw validationError('The Name field must be at most 200 characters.');
  const description = text(input.description);
  if (!description) throw requiredField('Description');
  if (description.length > 2000) throw validationError('The Description field must be at most 2000 characters.');

  const typeCode = text(input.paymentType)?.toUpperCase();
  if (!typeCode) throw requiredField('PaymentType');
  const type = await em.findOne(PaymentLinkType, { code: typeCode, status: true });
  if (!type) throw unsupported('PaymentType');
  const isSubscription = type.code === 'SUB';

  let currency: string | null = null;
  if (creating) {
    currency = (text(input.currency) ?? 'NGN').toUpperCase();
    if (!currencyOf(currency)) throw unsupported('Currency');
  }

  const authText = text(input.authOption)?.toUpperCase();
  if (creating && !authText) throw requiredField('AuthOption');
  if (authText && authText !== 'AUTH' && authText !== 'NOAUTH') throw unsupported('AuthOption');

  let amount: string | null = null;
  if (given(input.amount)) {
    const parsed = parseAmount(input.amount);
    if (typeof parsed === 'string') throw amountError(parsed);
    amount = parsed.toFixed(2);
  }

  let limit: number | null = null;
  if (given(input.limit)) {
    const t = String(input.limit).trim();
    if (!/^\d{1,9}$/.test(t) || Number(t) < 1) throw validationError('The Limit field must be a whole number of at least 1.');
    limit = Number(t);
  }

  if (!isSubscription && (given(input.frequencyId) || given(input.numberOfPayments))) {
    throw validationError(`The ${given(input.frequencyId) ? 'FrequencyId' : 'NumberOfPayments'} field is only for subscription links (PaymentType SUB).`);
  }
  const frequencyId = wholeNumber(input.frequencyId, 'FrequencyId', 2_147_483_647);
  if (frequencyId !== null && !(await em.findOne(Frequency, { id: frequencyId, isActive: true }))) throw unsupported('FrequencyId');
  const numberOfPayments = wholeNumber(input.numberOfPayments, 'NumberOfPayments', MAX_NUMBER_OF_PAYMENTS);

  if (!creating && given(input.captureMethod)) throw validationError('The CaptureMethod field is set when a link is created and cannot be changed.');
  const captureMethod = readCaptureMethod(input.captureMethod);
  // A renewal is charged without the customer: there is nothing to hold and capture later.
  if (isSubscription && captureMethod === 'MANUAL')
    throw validationError('The CaptureMethod field must be AUTOMATIC for subscription links (PaymentType SUB).');

  const mobile = text(input.mobile);
  if (mobile && !/^\+?[0-9 ()-]{6,20}$/.test(mobile)) throw validationError('The Mobile field is not a valid phone number.');
  const backgroundImage = text(input.backgroundImage);
  if (backgroundImage && !isHttpUrl(backgroundImage)) throw validationError('The BackgroundImage field must be an http or https URL.');
  const website = text(input.website);
  if (website && !isHttpUrl(website)) throw validationError('The Website field must be an http or https URL.');

  return {
    name,
    description,
    typeId: type.id,
    isSubscription,
    currency,
    authOption: authText as AuthOption | undefined,
    amount,
    limit,
    mobile,
    backgroundImage,
    website,
    frequencyId,
    numberOfPayments,
    captureMethod,
  };
}
