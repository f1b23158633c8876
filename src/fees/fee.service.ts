import type { MikroORM } from '@mikro-orm/postgresql';
import { requiredField, unsupported, validationError } from '../shared/errors';
import { currencyOf, Money, parseAmount, roundToMinor } from '../shared/money';
import type { Tenant } from '../merchants/tenant';
import type { FeeBearer } from '../merchants/app-environment.entity';
import { amountError } from '../links/payment-link.service';
import { runPrepared } from '../db/prepared';
import type { Loaded, ScopedCache, TenantCaches } from '../merchants/tenant-cache';

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
interface FeeRuleLite {
  own: boolean;
  paymentOption: string;
  currency: string;
  rate: string;
  flat: string;
  cap: string | null;
}

/** What fees depend on in one environment: who bears them and the rules that apply (its merchant's and the defaults). */
interface FeeSettings {
  bearer: FeeBearer;
  rules: FeeRuleLite[];
}

const FEE_SETTINGS = {
  name: 'pgw_fee_settings_v1',
  text: `select e.subsidiary_id, e.fee_bearer, r.subsidiary_id as rule_subsidiary_id, r.payment_option, r.currency, r.rate, r.flat, r.cap
           from app_environment e
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
    return { value: { bearer: first.fee_bearer, rules }, environmentId, subsidiaryId: first.subsidiary_id };
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
    return this.compute(tenant, amount, option as PaymentOptionCode, currency.code);
  }

  /** The fee for an amount already validated (order creation uses it too). */
  async compute(tenant: Tenant, amount: Money, option: PaymentOptionCode, currencyCode: string): Promise<FeeQuote> {
    const settings = await this.settingsOf(tenant.environmentId);
    const rules = settings.rules.filter((r) => r.paymentOption === option && r.currency === currencyCode);
    const rule = rules.find((r) => r.own) ?? rules[0];
    const minor = currencyOf(currencyCode)?.minorUnits ?? 2;

    let fee = new Money(0);
    if (rule) {
      fee = roundToMinor(amount.times(rule.rate).plus(rule.flat), minor);
      if (rule.cap !== null && fee.gt(rule.cap)) fee = new Money(rule.cap);
    }
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
