import { Field, Float, InputType, Int, ObjectType, registerEnumType } from 'type-graphql';
import { GraphQLJSON } from 'graphql-scalars';
import { DecimalScalar } from '../scalars';
import { PageInfo } from '../connection';
import { CaptureMethodEnum, PaymentLinkType } from '../links/payment-link.types';
import { EXACT_COUNT_BOUND } from '../../db/sql';

export enum PaymentOptionEnum {
  C = 'C',
  PAYPAL = 'PAYPAL',
}
registerEnumType(PaymentOptionEnum, { name: 'PaymentOption', description: 'C: card; PAYPAL: PayPal.' });

export enum OrderStatusEnum {
  INITIATED = 1,
  PENDING_AUTHENTICATION = 2,
  FAILED = 4,
  SUCCESSFUL = 5,
  AUTHORIZED = 6,
  VOIDED = 7,
}
registerEnumType(OrderStatusEnum, { name: 'OrderStatus' });

@ObjectType('OrderPayment', { simpleResolvers: true })
export class OrderPaymentType {
  @Field(() => Int) orderId!: number;
  @Field() orderPaymentReference!: string;
  @Field(() => Int) paymentOptionId!: number;
  @Field() paymentOption!: string;
  @Field(() => Int) statusId!: number;
  @Field() status!: string;
  @Field() responseCode!: string;
  @Field() responseMessage!: string;
  @Field(() => String, { nullable: true }) orderPaymentInstrument!: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      'While the attempt awaits its cardholder (3-D Secure or PayPal): the page to send the customer to, as payOrder answered it. Null otherwise. After a PROCESSOR_TIMEOUT whose call the processor answered with a challenge, this is where the customer goes.',
  })
  authenticationUrl!: string | null;
  @Field() remarks!: string;
  @Field() dateCreated!: Date;
  @Field() dateUpdated!: Date;
}

@ObjectType('Customer', { simpleResolvers: true })
export class CustomerType {
  @Field(() => String, { nullable: true }) customerId!: string | null;
  @Field(() => String, { nullable: true }) firstName!: string | null;
  @Field(() => String, { nullable: true }) lastName!: string | null;
  @Field(() => String, { nullable: true }) emailAddress!: string | null;
  @Field(() => String, { nullable: true }) countryShortName!: string | null;
  @Field(() => Int) countryId!: number;
  @Field(() => String, { nullable: true }) customerGroup!: string | null;
  @Field(() => Int) globalStatusId!: number;
  @Field(() => String, { nullable: true }) globalStatus!: string | null;
  @Field(() => String, { nullable: true }) mobileNumber!: string | null;
  @Field() isBlacklisted!: boolean;
  @Field(() => String, { nullable: true }) reasonBlacklisted!: string | null;
  @Field(() => Date, { nullable: true, description: 'null when no customer data exists.' }) dateCreated!: Date | null;
  @Field(() => Date, { nullable: true }) dateUpdated!: Date | null;
}

@ObjectType('CardDetail', { description: 'What is kept of a card: never the full number nor the security code.', simpleResolvers: true })
export class CardDetailType {
  @Field(() => Int) orderPaymentId!: number;
  @Field() status!: boolean;
  @Field(() => String, { nullable: true }) country!: string | null;
  @Field(() => String, { nullable: true, description: "The processor's token; never the card number." }) cardToken!: string | null;
  @Field(() => Int) appEnvironmentId!: number;
  @Field() cardExpiryMonth!: string;
  @Field() cardExpiryYear!: string;
  @Field() cardType!: string;
  @Field() cardIssuer!: string;
  @Field() cardFirstSixDigits!: string;
  @Field() cardLastFourDigits!: string;
  @Field() dateCreated!: Date;
}

@ObjectType('Order', { description: 'Order details; fields named as in order/verify. Money is exact (Decimal strings).', simpleResolvers: true })
export class OrderType {
  @Field() orderReference!: string;
  @Field() paymentReference!: string;
  @Field() productName!: string;
  @Field(() => DecimalScalar) amount!: string;
  @Field(() => DecimalScalar) totalAmountCharged!: string;
  @Field(() => Int) statusId!: number;
  @Field() status!: string;
  @Field() paymentMethod!: string;
  @Field() paymentResponseCode!: string;
  @Field() paymentResponseMessage!: string;
  @Field() narration!: string;
  @Field() remarks!: string;
  @Field(() => Int) currencyId!: number;
  @Field() currencyName!: string;
  @Field(() => Int, { nullable: true }) paymentLinkId!: number | null;
  @Field(() => String, { nullable: true }) paymentLinkReference!: string | null;
  @Field(() => Int, { nullable: true }) recurringPaymentId!: number | null;
  @Field(() => String, { nullable: true }) recurringPaymentReference!: string | null;
  @Field(() => DecimalScalar) fee!: string;
  // simple: false on the fields a list page's node builds from the complete order view (feeRate,
  // orderPayments, paymentLink): with no resolver, compiled execution reads a field in code with no
  // try/catch, so a fault there would never answer; through a resolver it is a field error.
  @Field(() => DecimalScalar, { simple: false }) feeRate!: string;
  @Field(() => DecimalScalar) subsidiaryFee!: string;
  @Field(() => DecimalScalar) customerFee!: string;
  @Field() dateCreated!: Date;
  @Field() dateUpdated!: Date;
  @Field(() => Date, { nullable: true }) datePaymentConfirmed!: Date | null;
  @Field(() => CaptureMethodEnum, { description: 'MANUAL: an approved payment is held (Authorized) until captureOrder or voidOrder.' })
  captureMethod!: CaptureMethodEnum;
  @Field(() => DecimalScalar, {
    nullable: true,
    description: 'The amount held when the payment was authorized (MANUAL orders); once captured, `amount` is the amount captured.',
  })
  amountAuthorized!: string | null;
  @Field(() => [OrderPaymentType], { simple: false }) orderPayments!: OrderPaymentType[];
  // Customer and card data need the private key wherever an order is returned (payOrder and
  // createOrder included): public keys sit in browsers. Checked by OrderPrivateFieldsResolver
  // (the `read` permission, as `@Authorized('read')` would, without a promise per order).
  @Field(() => CustomerType, { description: 'Needs the private key.' })
  customer!: CustomerType;
  @Field(() => [CardDetailType], { description: 'Needs the private key.' })
  cardDetails!: CardDetailType[];
  @Field(() => PaymentLinkType, { nullable: true, simple: false }) paymentLink!: PaymentLinkType | null;
}

/**
 * The order as a field resolver of `Order` receives it: an `OrderType`, or a list page's lazy
 * `OrderListNode`. Typed by an interface on purpose: for a parameter typed with a class,
 * type-graphql copies the root into a new instance of that class, which drops a list node's
 * getters (its reference read as undefined).
 */
export interface OrderRoot {
  readonly orderReference: string;
  readonly customer: CustomerType;
  readonly cardDetails: CardDetailType[];
}

@ObjectType('OrderEdge', { simpleResolvers: true })
export class OrderEdge {
  @Field() cursor!: string;
  @Field(() => OrderType) node!: OrderType;
}

@ObjectType('OrderConnection', { simpleResolvers: true })
export class OrderConnection {
  @Field(() => [OrderEdge]) edges!: OrderEdge[];
  @Field(() => PageInfo) pageInfo!: PageInfo;
  @Field(() => Int, { description: `Exact up to ${EXACT_COUNT_BOUND.toLocaleString('en')} matching orders; beyond, an estimate (see totalCountIsEstimate).` })
  totalCount!: number;
  @Field({ description: 'true when totalCount is an estimate (more matching orders than the bound of exact counting).' }) totalCountIsEstimate!: boolean;
}

@InputType()
export class OrderFilterInput {
  @Field(() => [Int], {
    nullable: true,
    description:
      'Status ids (at most 20, duplicates ignored): 1 Initiated, 2 pending authentication, 3 Processing, 4 Failed, 5 Successful, 6 Authorized, 7 Voided.',
  })
  statusIds?: number[] | null;
  @Field(() => Date, { nullable: true }) createdFrom?: Date | null;
  @Field(() => Date, { nullable: true }) createdTo?: Date | null;
  @Field(() => Int, { nullable: true }) paymentLinkId?: number | null;
  @Field(() => String, { nullable: true, description: 'A supported currency code, such as NGN.' }) currency?: string | null;
  @Field(() => String, { nullable: true, description: 'Order reference (prefix) or exact customer e-mail; at most 320 characters.' }) search?: string | null;
  @Field(() => String, {
    nullable: true,
    description: 'As the order\'s paymentMethod field shows it: "Card Payment", "PayPal", or "" for orders without a payment attempt yet.',
  })
  paymentMethod?: string | null;
}

@ObjectType('TimelineEntry')
export class TimelineEntryType {
  @Field() id!: string;
  @Field() event!: string;
  @Field(() => String, { nullable: true }) description!: string | null;
  @Field({ description: 'system or merchant' }) source!: string;
  @Field(() => GraphQLJSON, { nullable: true }) metadata!: unknown;
  @Field() createdAt!: Date;
}

@ObjectType('FeeQuote')
export class FeeQuoteType {
  @Field(() => DecimalScalar) amount!: string;
  @Field(() => DecimalScalar) fee!: string;
  @Field(() => DecimalScalar) feeRate!: string;
  @Field(() => DecimalScalar) subsidiaryFee!: string;
  @Field(() => DecimalScalar) customerFee!: string;
  @Field(() => DecimalScalar) totalChargedAmount!: string;
  @Field(() => PaymentOptionEnum) paymentOption!: PaymentOptionEnum;
  @Field() currency!: string;
  @Field({ description: 'merchant or customer' }) bearer!: string;
}

@ObjectType('OrderStatusChange')
export class OrderStatusChangeType {
  @Field() reference!: string;
  @Field(() => Int) statusId!: number;
  @Field() status!: string;
  @Field(() => Int, { description: 'Per-order sequence: drop an event older than one already seen.' }) sequence!: number;
  @Field() eventId!: string;
}

@ObjectType('StatusSummary')
export class StatusSummaryType {
  @Field(() => Int) statusId!: number;
  @Field() status!: string;
  @Field() currency!: string;
  @Field(() => Int) count!: number;
  @Field(() => DecimalScalar, { description: 'Sum of amounts.' }) amount!: string;
  @Field(() => DecimalScalar, { description: 'Sum of fees.' }) fees!: string;
}

@ObjectType('DashboardSummary')
export class DashboardSummaryType {
  @Field() from!: Date;
  @Field() to!: Date;
  @Field(() => [StatusSummaryType]) byStatus!: StatusSummaryType[];
  @Field(() => Float, { description: 'Successful orders / settled (successful + failed) orders, 0 when none.' }) successRate!: number;
  @Field(() => [MethodSummaryType], { description: 'One per payment method and currency with orders in [from, to).' }) byMethod!: MethodSummaryType[];
  @Field(() => [DailySummaryType], { description: 'One per UTC day and currency with orders in [from, to), oldest first.' }) daily!: DailySummaryType[];
}

@ObjectType('MethodSummary')
export class MethodSummaryType {
  @Field({ description: 'As the orders\' paymentMethod field shows it ("" before any payment attempt).' }) paymentMethod!: string;
  @Field() currency!: string;
  @Field(() => Int) count!: number;
  @Field(() => Int) successful!: number;
  @Field(() => Int) failed!: number;
  @Field(() => Float, { description: 'successful / (successful + failed), 0 when none.' }) successRate!: number;
  @Field(() => DecimalScalar, { description: 'Sum of the amounts of the successful orders.' }) volume!: string;
}

@ObjectType('DailySummary')
export class DailySummaryType {
  @Field({ description: 'YYYY-MM-DD, UTC.' }) date!: string;
  @Field() currency!: string;
  @Field(() => Int) count!: number;
  @Field(() => Int) successful!: number;
  @Field(() => DecimalScalar, { description: 'Sum of the amounts of the successful orders.' }) volume!: string;
}

@InputType()
export class CreateOrderCustomerInput {
  @Field() firstname!: string;
  @Field() lastname!: string;
  @Field(() => String, { nullable: true, description: 'Optional: the customer is known by email.' }) mobile?: string | null;
  @Field() country!: string;
  @Field() email!: string;
}

@InputType()
export class CreateOrderInput {
  @Field(() => CreateOrderCustomerInput) customer!: CreateOrderCustomerInput;
  @Field(() => DecimalScalar) amount!: string;
  @Field() reference!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => String, { nullable: true, description: 'Default NGN.' }) currency?: string | null;
  @Field() redirectUrl!: string;
  @Field(() => Int, { nullable: true }) paymentLinkId?: number | null;
  @Field(() => Int, { nullable: true }) frequencyId?: number | null;
  @Field(() => Int, { nullable: true }) numberOfPayments?: number | null;
  @Field(() => String, { nullable: true }) ipAddress?: string | null;
  @Field(() => CaptureMethodEnum, {
    nullable: true,
    description: "Default AUTOMATIC. An order on a payment link takes the link's method (a different one given is refused).",
  })
  captureMethod?: CaptureMethodEnum | null;
}

@InputType()
export class CaptureOrderInput {
  @Field() reference!: string;
  @Field(() => DecimalScalar, { nullable: true, description: 'At most the amount authorized, at most two decimals; absent: all of it.' })
  amount?: string | null;
  @Field(() => String, {
    nullable: true,
    description:
      'The same key with the same reference and amount answers the first capture again without capturing anything more; with another, IDEMPOTENCY_KEY_REUSED. Per environment, shared with voidOrder.',
  })
  idempotencyKey?: string | null;
}

@InputType()
export class VoidOrderInput {
  @Field() reference!: string;
  @Field(() => String, {
    nullable: true,
    description:
      'The same key with the same reference answers the first void again; with another request, IDEMPOTENCY_KEY_REUSED. Per environment, shared with captureOrder.',
  })
  idempotencyKey?: string | null;
}

@InputType()
export class PayOrderInput {
  @Field() reference!: string;
  @Field(() => PaymentOptionEnum) paymentOption!: PaymentOptionEnum;
  @Field({ description: 'ISO 3166-1 alpha-2 of the customer.' }) country!: string;
  @Field({
    description:
      'The card or PayPal part, encrypted with the encryption key exactly like the REST `data`: the plaintext is `{ "card": { cardNumber, expiryMonth, expiryYear, cvv, billingAddress } }` or `{ "paypal": { fullName, mobile, house, billingAddress } }`. Plain card fields are never accepted.',
  })
  encryptedPayload!: string;
}

@ObjectType('PayOrderResult')
export class PayOrderResultType {
  @Field({ description: 'Where to send the customer: the 3-D Secure or PayPal page, or the merchant when final.' }) redirectUrl!: string;
  @Field({ description: 'true when the payment is settled already (NOAUTH links).' }) final!: boolean;
  @Field(() => OrderType) order!: OrderType;
}

@InputType()
export class TrackOrderEventInput {
  @Field() orderReference!: string;
  @Field() event!: string;
  @Field(() => String, { nullable: true }) description?: string | null;
  @Field(() => GraphQLJSON, { nullable: true }) metadata?: Record<string, unknown> | null;
}

@ObjectType('OrderStatusInfo', { description: 'What order/status answers: the status and whether it is settled.' })
export class OrderStatusInfoType {
  @Field() reference!: string;
  @Field(() => Int) statusId!: number;
  @Field() status!: string;
  @Field({ description: 'Successful, Failed or Voided: nothing will change any more (Authorized is not final).' }) isFinalStatus!: boolean;
  @Field({ description: 'Query again later: the status may still change.' }) requeryNeeded!: boolean;
  @Field() paymentResponseCode!: string;
  @Field() paymentResponseMessage!: string;
  @Field(() => Date, { nullable: true }) datePaymentConfirmed!: Date | null;
}
