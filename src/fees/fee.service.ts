import type { MikroORM } from '@mikro-orm/postgresql';
import { requiredField, unsupported, validationError } from '../shared/errors';
import { currencyOf, Money, parseAmount, roundToMinor } from '../shared/money';
import type { Tenant } from '../merchants/tenant';
import { AppEnvironment, type FeeBearer } from '../merchants/app-environment.entity';
import { amountError } from '../links/payment-link.service';
import { FeeRule } from './fee-rule.entity';

export const PAYMENT_OPTIONS = ['C', 'PAYPAL'] as const;
export type PaymentOptionCode = (typeof PAYMENT_OPTIONS)[number];

export interface FeeQuoteInput {
  amount?: unknown;
  paymentOption?: string | null;
  currency?: string | null;
}

/** Exact decimal strings; adapters print them. */
export interface FeeQuote {
  amount: string;
  fee: string;
  feeRate: string;
  subsidiaryFee: string;
  customerFee: string;
  totalChargedAmount: string;
  paymentOption: PaymentOptionCode;
  currency: string;
  bearer: FeeBearer;
}

/**
 * Deterministic fees: the merchant's rule for (option, currency), else the platform default;
 * `fee = min(round(amount × rate + flat), cap)`, borne by the merchant or the customer as the
 * environment is set. `totalChargedAmount = amount + customerFee`.
 */
export class FeeService {
  constructor(private readonly orm: MikroORM) {}

  async quote(tenant: Tenant, input: FeeQuoteInput): Promise<FeeQuote> {
    const option = typeof input.paymentOption === 'string' ? input.paymentOption.trim().toUpperCase() : '';
    if (!option) throw validationError('payment option is required!');
    if (!(PAYMENT_OPTIONS as readonly string[]).includes(option)) throw unsupported('PaymentOption');
    const currencyCode = (typeof input.currency === 'string' && input.currency.trim() ? input.currency.trim() : 'NGN').toUpperCase();
    const currency = currencyOf(currencyCode);
    if (!currency) throw unsupported('Currency');
    if (input.amount === undefined || input.amount === null || input.amount === '') throw requiredField('Amount');
    const amount = parseAmount(input.amount, currency.minorUnits);
    if (typeof amount === 'string') throw amountError(amount);
    return this.compute(tenant, amount, option as PaymentOptionCode, currency.code);
  }

  /** The fee for an amount already validated (order creation uses it too). */
  async compute(tenant: Tenant, amount: Money, option: PaymentOptionCode, currencyCode: string): Promise<FeeQuote> {
    const em = this.orm.em.fork();
    const rules = await em.find(
      FeeRule,
      { paymentOption: option, currency: currencyCode, $or: [{ subsidiary: tenant.subsidiaryId }, { subsidiary: null }] },
    );
    const rule = rules.find((r) => r.subsidiary !== null) ?? rules[0];
    const environment = await em.findOneOrFail(AppEnvironment, { id: tenant.environmentId });
    const minor = currencyOf(currencyCode)?.minorUnits ?? 2;

    let fee = new Money(0);
    if (rule) {
      fee = roundToMinor(amount.times(rule.rate).plus(rule.flat), minor);
      if (rule.cap !== null && fee.gt(rule.cap)) fee = new Money(rule.cap);
    }
    const bearer = environment.feeBearer;
    const customerFee = bearer === 'customer' ? fee : new Money(0);
    const subsidiaryFee = bearer === 'merchant' ? fee : new Money(0);
    return {
      amount: amount.toFixed(minor),
      fee: fee.toFixed(minor),
      feeRate: new Money(rule?.rate ?? 0).toString(),
      subsidiaryFee: subsidiaryFee.toFixed(minor),
      customerFee: customerFee.toFixed(minor),
      totalChargedAmount: amount.plus(customerFee).toFixed(minor),
      paymentOption: option,
      currency: currencyCode,
      bearer,
    };
  }
}
