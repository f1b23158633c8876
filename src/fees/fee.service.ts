import type { MikroORM } from '@mikro-orm/postgresql';
import { DomainError, requiredField, unsupported, validationError } from '../shared/errors';
import { amountError, currencyOf, Money, parseAmount } from '../shared/money';
import type { Tenant } from '../merchants/tenant';
import type { FeeBearer } from '../merchants/app-environment.entity';
import { runPrepared } from '../db/sql';
import type { Loaded, ScopedCache, TenantCaches } from '../merchants/tenant-cache';
import { PAYMENT_OPTIONS, type PaymentOptionCode } from '../shared/payment-options';
import { assertAtLeastMinimum, feeOf } from './minimums';

/** The merchant turned PayPal off: quotes and payments by PayPal are refused. */
export const paypalDisabled = (): DomainError => new DomainError('unsupported', 'PayPal is not enabled for this merchant.', 'VAL400');

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
interface FeeRuleLite {
  own: boolean;
  paymentOption: string;
  currency: string;
  rate: string;
  flat: string;
  cap: string | null;
}

/** What fees depend on in one environment: who bears them, the rules that apply (its merchant's and the defaults), whether PayPal is on. */
interface FeeSettings {
  bearer: FeeBearer;
  rules: FeeRuleLite[];
  paypalEnabled: boolean;
}

const FEE_SETTINGS = {
  name: 'pgw_fee_settings_v2',
  text: `select e.subsidiary_id, e.fee_bearer, s.paypal_enabled, r.subsidiary_id as rule_subsidiary_id, r.payment_option, r.currency, r.rate, r.flat, r.cap
           from app_environment e
           join subsidiary s on s.id = e.subsidiary_id
           left join fee_rule r on r.subsidiary_id = e.subsidiary_id or r.subsidiary_id is null
          where e.id = $1`,
};

export class FeeService {
  private readonly settings?: ScopedCache<FeeSettings>;

  constructor(
    private readonly orm: MikroORM,
    caches?: TenantCaches,
  ) {
    this.settings = caches?.create<FeeSettings>();
  }

  /** The fee settings of an environment, cached per instance (TenantCaches: a change anywhere drops them at commit). */
  private async settingsOf(environmentId: number): Promise<FeeSettings> {
    const settings = this.settings ? await this.settings.get(environmentId, () => this.load(environmentId)) : (await this.load(environmentId)).value;
    return settings!;
  }

  private async load(environmentId: number): Promise<Loaded<FeeSettings>> {
    const rows = (await runPrepared(this.orm, FEE_SETTINGS, [environmentId])) as Array<{
      subsidiary_id: number;
      fee_bearer: FeeBearer;
      paypal_enabled: boolean;
      rule_subsidiary_id: number | null;
      payment_option: string | null;
      currency: string;
      rate: string;
      flat: string;
      cap: string | null;
    }>;
    const first = rows[0];
    if (!first) throw new Error(`environment ${environmentId} not found`);
    const rules = rows
      .filter((r) => r.payment_option !== null)
      .map((r) => ({ own: r.rule_subsidiary_id !== null, paymentOption: r.payment_option!, currency: r.currency, rate: r.rate, flat: r.flat, cap: r.cap }));
    return { value: { bearer: first.fee_bearer, rules, paypalEnabled: first.paypal_enabled }, environmentId, subsidiaryId: first.subsidiary_id };
  }

  private ruleOf(settings: FeeSettings, option: PaymentOptionCode, currencyCode: string): FeeRuleLite | undefined {
    const rules = settings.rules.filter((r) => r.paymentOption === option && r.currency === currencyCode);
    return rules.find((r) => r.own) ?? rules[0];
  }

  /**
   * The rules of paying `amount` by `option`, checked at quote and at pay: the merchant has the
   * option turned on, and the amount is at least the option's minimum (minimums.ts), which also
   * keeps every fee below the amount it is taken from.
   */
  async assertPayable(tenant: Tenant, amount: Money, option: PaymentOptionCode, currencyCode: string): Promise<void> {
    (await this.payableRules(tenant))(amount, option, currencyCode);
  }

  /**
   * assertPayable as a check that reads nothing more: the settings are read (or taken from the
   * cache) now, so that a transaction can run the check without a second connection.
   */
  async payableRules(tenant: Tenant): Promise<(amount: Money, option: PaymentOptionCode, currencyCode: string) => void> {
    const settings = await this.settingsOf(tenant.environmentId);
    return (amount, option, currencyCode) => {
      if (option === 'PAYPAL' && !settings.paypalEnabled) throw paypalDisabled();
      const minor = currencyOf(currencyCode)?.minorUnits ?? 2;
      assertAtLeastMinimum(amount, option, currencyCode, this.ruleOf(settings, option, currencyCode), minor);
    };
  }

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
    await this.assertPayable(tenant, amount, option as PaymentOptionCode, currency.code);
    return this.compute(tenant, amount, option as PaymentOptionCode, currency.code);
  }

  /** The fee for an amount already validated (order creation uses it too). */
  async compute(tenant: Tenant, amount: Money, option: PaymentOptionCode, currencyCode: string): Promise<FeeQuote> {
    const settings = await this.settingsOf(tenant.environmentId);
    const rule = this.ruleOf(settings, option, currencyCode);
    const minor = currencyOf(currencyCode)?.minorUnits ?? 2;
    // Never more than the amount, even on an order below the option's minimum (which is never paid).
    const fee = Money.min(feeOf(amount, rule, minor), amount);
    const bearer = settings.bearer;
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
