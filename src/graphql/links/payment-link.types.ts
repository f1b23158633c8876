import { Field, ID, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { DecimalScalar } from '../scalars';
import { PageInfo } from '../connection';
import { EXACT_COUNT_BOUND } from '../../db/sql';

export enum PaymentLinkCode {
  SC = 'SC',
  MC = 'MC',
  SUB = 'SUB',
}
registerEnumType(PaymentLinkCode, { name: 'PaymentLinkCode', description: 'SC single charge, MC multiple charge, SUB subscription.' });

export enum AuthOptionEnum {
  AUTH = 'AUTH',
  NOAUTH = 'NOAUTH',
}
registerEnumType(AuthOptionEnum, { name: 'AuthOption', description: 'AUTH: 3-D Secure; NOAUTH: none.' });

export enum PaymentLinkStatusEnum {
  ACTIVE = 'ACTIVE',
  PAID = 'PAID',
  LIMIT_REACHED = 'LIMIT_REACHED',
  DISABLED = 'DISABLED',
}
registerEnumType(PaymentLinkStatusEnum, {
  name: 'PaymentLinkStatus',
  description:
    'Whether customers can pay the link now. ACTIVE: yes; PAID: a single-charge link already paid; LIMIT_REACHED: as many customers paid as its limit allows; DISABLED: deactivated by the merchant.',
});

export enum CaptureMethodEnum {
  AUTOMATIC = 'AUTOMATIC',
  MANUAL = 'MANUAL',
}
registerEnumType(CaptureMethodEnum, {
  name: 'CaptureMethod',
  description: 'AUTOMATIC: an approved payment is taken at once; MANUAL: it is held (Authorized) until captureOrder or voidOrder.',
});

@ObjectType('PaymentLink', { simpleResolvers: true })
export class PaymentLinkType {
  @Field(() => Int) id!: number;
  @Field() name!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field() reference!: string;
  @Field() isActive!: boolean;
  /** The link's status when already known (resolved by PaymentLinkResolver.status otherwise). */
  status?: PaymentLinkStatusEnum;
  @Field(() => DecimalScalar, { nullable: true, description: 'null: the customer enters the amount.' }) amount!: string | null;
  @Field() currency!: string;
  @Field() paymentLinkUrl!: string;
  @Field(() => PaymentLinkCode) paymentLinkCode!: PaymentLinkCode;
  @Field({ description: 'The type name, e.g. "Single Charge".' }) paymentLinkType!: string;
  @Field(() => AuthOptionEnum) authOption!: AuthOptionEnum;
  @Field(() => CaptureMethodEnum, { description: "When the money of the link's orders is taken; every order on the link takes it." })
  captureMethod!: CaptureMethodEnum;
  @Field(() => Int, { nullable: true, description: 'Number of paying customers the link accepts.' }) limit!: number | null;
  @Field(() => Int, { nullable: true, description: 'Subscription links: the charge frequency (see `frequencies`); null on other links.' })
  frequencyId!: number | null;
  @Field(() => Int, { nullable: true, description: 'Subscription links: how many payments in all; null on other links.' })
  numberOfPayments!: number | null;
  @Field(() => String, { nullable: true }) logo!: string | null;
  @Field(() => String, { nullable: true }) website!: string | null;
  @Field(() => String, { nullable: true }) mobile!: string | null;
  @Field(() => String, { nullable: true }) backgroundImage!: string | null;
  @Field(() => Int) appEnvironmentId!: number;
  @Field() dateCreated!: Date;
  @Field() dateUpdated!: Date;
}

@ObjectType('PaymentLinkEdge', { simpleResolvers: true })
export class PaymentLinkEdge {
  @Field() cursor!: string;
  @Field(() => PaymentLinkType) node!: PaymentLinkType;
}

@ObjectType('PaymentLinkConnection', { simpleResolvers: true })
export class PaymentLinkConnection {
  @Field(() => [PaymentLinkEdge]) edges!: PaymentLinkEdge[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
  @Field(() => Int, { description: `Exact up to ${EXACT_COUNT_BOUND.toLocaleString('en')} matching links; beyond, an estimate (see totalCountIsEstimate).` })
  totalCount!: number;
  @Field({ description: 'true when totalCount is an estimate (more matching links than the bound of exact counting).' }) totalCountIsEstimate!: boolean;
}

@InputType()
export class PaymentLinkFilterInput {
  @Field(() => Boolean, { nullable: true }) isActive?: boolean | null;
  @Field(() => String, { nullable: true }) currency?: string | null;
  @Field(() => String, { nullable: true, description: 'Matches name or reference.' }) search?: string | null;
  @Field(() => Date, { nullable: true }) createdFrom?: Date | null;
  @Field(() => Date, { nullable: true }) createdTo?: Date | null;
}

@InputType()
export class CreatePaymentLinkInput {
  @Field() name!: string;
  @Field() description!: string;
  @Field(() => PaymentLinkCode) paymentType!: PaymentLinkCode;
  @Field(() => String, { nullable: true, description: 'Default NGN.' }) currency?: string | null;
  @Field(() => AuthOptionEnum, { nullable: true, defaultValue: AuthOptionEnum.AUTH }) authOption?: AuthOptionEnum | null;
  @Field(() => CaptureMethodEnum, {
    nullable: true,
    defaultValue: CaptureMethodEnum.AUTOMATIC,
    description: 'MANUAL: approved payments are held until captured or voided (not for subscription links). Set at creation only.',
  })
  captureMethod?: CaptureMethodEnum | null;
  @Field(() => DecimalScalar, { nullable: true }) amount?: string | null;
  @Field(() => Int, { nullable: true }) limit?: number | null;
  @Field(() => Int, { nullable: true, description: 'Subscription links only: the charge frequency; default 6 (monthly).' }) frequencyId?: number | null;
  @Field(() => Int, { nullable: true, description: 'Subscription links only: how many payments in all (1 to 1000); default 12.' })
  numberOfPayments?: number | null;
  @Field(() => String, { nullable: true }) mobile?: string | null;
  @Field(() => String, { nullable: true }) backgroundImage?: string | null;
  @Field(() => String, { nullable: true }) website?: string | null;
}

@InputType()
export class EditPaymentLinkInput {
  @Field() name!: string;
  @Field() description!: string;
  @Field(() => PaymentLinkCode) paymentType!: PaymentLinkCode;
  @Field(() => AuthOptionEnum, { nullable: true }) authOption?: AuthOptionEnum | null;
  @Field(() => DecimalScalar, { nullable: true }) amount?: string | null;
  @Field(() => Int, { nullable: true }) limit?: number | null;
  @Field(() => Int, { nullable: true, description: 'Subscription links only: the charge frequency; default 6 (monthly).' }) frequencyId?: number | null;
  @Field(() => Int, { nullable: true, description: 'Subscription links only: how many payments in all (1 to 1000); default 12.' })
  numberOfPayments?: number | null;
  @Field(() => String, { nullable: true }) mobile?: string | null;
  @Field(() => String, { nullable: true }) backgroundImage?: string | null;
  @Field(() => String, { nullable: true }) website?: string | null;
}

@ObjectType('PaymentLinkTypeInfo', { description: 'A payment link type (SC, MC, SUB).' })
export class PaymentLinkTypeInfo {
  @Field(() => Int) id!: number;
  @Field() code!: string;
  @Field() paymentLinkName!: string;
  @Field() description!: string;
  @Field() status!: boolean;
}

@ObjectType('Frequency')
export class FrequencyType {
  @Field(() => Int) id!: number;
  @Field() name!: string;
  @Field() description!: string;
  @Field(() => Int) hours!: number;
  @Field(() => Int) days!: number;
  @Field(() => Boolean, { nullable: true }) isActive!: boolean | null;
}

export { ID };
