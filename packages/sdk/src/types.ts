/**
 * Request and result types of the REST interface, as docs/api.md describes it. Money is a
 * JSON number in REST answers (exact to the currency's minor unit); timestamps are ISO 8601
 * in UTC without a zone designator, e.g. "2026-11-23T10:15:30.123456".
 */

export type Timestamp = string;

// ---------------------------------------------------------------- envelopes

/** Envelope A: most successful answers. */
export interface EnvelopeA<T> {
  data: T;
  status: 'success';
  /** `00` most operations, `01` order created, `02` payment pending authentication. */
  statusCode: string;
  message: string;
}

/** Envelope B: order/status. Settled when `is_final_status` and not `requery_needed`. */
export interface EnvelopeB<T> {
  is_final_status: boolean;
  requery_needed: boolean;
  requery_type: string | null;
  data: T;
  status: 'success';
  status_code: '00';
  message: string;
}

/** An error body as the service sends it: the code is under `statusCode`, or `status_code` for codes 13 and 100. */
export interface ErrorBody {
  status: 'failed';
  statusCode?: string;
  status_code?: string;
  message: string;
}

// ---------------------------------------------------------------- payment links

export type PaymentLinkCode = 'SC' | 'MC' | 'SUB';
export type AuthOption = 'AUTH' | 'NOAUTH';

export interface Subsidiary {
  id: number;
  name: string;
  /** ISO 3166-1 alpha-2. */
  country: string;
  supportEmail: string;
  customization: unknown[] | null;
}

export interface PaymentLink {
  id: number;
  name: string;
  /** null in create/edit answers; the type name (`Single Charge`, …) in the list. */
  paymentType: string | null;
  logo: string | null;
  /** null: the customer enters the amount. */
  amount: number | null;
  dateCreated: Timestamp;
  reference: string;
  createdBy: null;
  creatorEmail: null;
  isActive: boolean;
  currency: string;
  limit: number | null;
  /** Public URL of the link; ends with `reference`. */
  paymentLinkUrl: string;
  appEnvironmentId: number;
  /** The type name in create/edit answers; null in the list. */
  paymentLinkType: string | null;
  /** `SC`, `MC` or `SUB` in create/edit answers; null in the list. */
  paymentLinkCode: PaymentLinkCode | null;
  description: string | null;
}

/** Body of links/create. Names as the service documents them (matched case-insensitively). */
export interface CreatePaymentLinkRequest {
  Name: string;
  Description: string;
  PaymentType: PaymentLinkCode;
  /** Default `NGN`. */
  Currency?: string;
  AuthOption: AuthOption;
  /** Leave out to let the customer enter the amount. */
  Amount?: string | number;
  Mobile?: string;
  BackgroundImage?: string;
  Website?: string;
  /** Number of subscribers that may use the link. */
  Limit?: string | number;
}

/** Body of links/{id}/edit: as create, without `Currency`; `AuthOption` optional. */
export interface EditPaymentLinkRequest extends Omit<CreatePaymentLinkRequest, 'Currency' | 'AuthOption'> {
  AuthOption?: AuthOption;
}

export interface PaymentLinkResult {
  paymentLink: PaymentLink;
  subsidiary: Subsidiary;
}

export interface PaymentLinkType {
  paymentLinkName: string;
  description: string;
  status: boolean;
  code: PaymentLinkCode;
  id: number;
  dateCreated: Timestamp | null;
  dateUpdated: Timestamp | null;
  dateDeleted: Timestamp | null;
  createdBy: number;
  updatedBy: number | null;
  deletedBy: number | null;
}

/** links/types answers without an envelope's `data`. */
export interface PaymentLinkTypesResponse {
  paymentLinkTypes: PaymentLinkType[];
  status: 'success';
  statusCode: '00';
  message: string;
}

export interface Frequency {
  hours: number;
  days: number;
  name: string;
  description: string;
  isActive: boolean | null;
  id: number;
  dateCreated: Timestamp | null;
  dateUpdated: Timestamp | null;
  dateDeleted: Timestamp | null;
  createdBy: number | null;
  updatedBy: number | null;
  deletedBy: number | null;
}

export interface Bank {
  name: string;
  countryId: number;
  bankCode: string;
  isMicrofinance: boolean | null;
  isMortgage: boolean | null;
  ussdBankCode: string | null;
  logo: string;
  id: number;
  dateCreated: Timestamp | null;
  dateUpdated: Timestamp | null;
  dateDeleted: Timestamp | null;
  createdBy: number | null;
  updatedBy: number | null;
  deletedBy: number | null;
}

// ---------------------------------------------------------------- orders

export type PaymentOption = 'C' | 'PAYPAL';

export interface CreateOrderRequest {
  customer: { firstname: string; lastname: string; mobile: string; country: string; email: string };
  order: { amount: number | string; reference: string; description: string; currency: string };
  payment: { RedirectUrl: string; paymentLinkId?: number; frequencyId?: number; numberOfPayments?: number };
  paymentMeta?: { ipAddress: string };
}

export interface CreatedOrder {
  order: {
    reference: string;
    processorReference: string;
    orderPaymentReference: string | null;
    /** The amount of the goods, as the merchant gave it. */
    amount: number;
    /** The whole processing fee, whoever bears it. */
    fee: number;
    feeRate: number | null;
    statusId: number;
    status: string;
    currency: string;
    narration: string;
    paymentLinkId: number | null;
    recurringPaymentId: number | null;
    paymentLinkReference: string | null;
    recurringPaymentReference: string | null;
  };
  subsidiary: Subsidiary;
  customer: { email: string; firstName: string; lastName: string; mobile: string; country: string };
  payment: { code: null; source: null; selectedOption: null; accountNumber: null; bankProviderName: null };
  otherPaymentOptions: Array<{ code: string; name: string; currency: string }>;
  savedCards: unknown[];
  subsidiaryOrderSummary: {
    orderName: string;
    /** What the customer will be charged: amount plus the customer's share of the fee. */
    totalAmount: number;
    reference: string;
    currency: string;
    orderItems: Array<{ name: string; amount: number }>;
  };
}

export interface OrderFeeRequest {
  amount: number | string;
  paymentOption: PaymentOption;
  currency?: string;
}

export interface FeeResult {
  /** The whole processing fee. */
  fee: number;
  amount: number;
  /** The merchant's share of `fee` (all of it when the merchant bears the fee, else 0). */
  subsidiaryFee: number;
  /** The customer's share of `fee` (all of it when the customer bears the fee, else 0). */
  customerFee: number;
  /** amount + customerFee. */
  totalChargedAmount: number;
  paymentOption: PaymentOption;
}

/** order/status `data` (snake_case, as the legacy interface names it). */
export interface OrderStatusRecord {
  payment_reference: string;
  order_reference: string;
  product_id: number;
  subsidiary_id: number;
  wallet_id: number;
  customer_id: number;
  total_charged_amount: number;
  /** 1 Initiated, 2 pending authentication, 4 Failed, 5 Successful. */
  payment_status: number;
  currency_id: number;
  fee: number;
  subsidiary_fee: number | null;
  customer_fee: number | null;
  payment_type: string;
  payment_response_code: string;
  payment_response_message: string;
  provider_response_date: Timestamp | null;
  date_payment_confirmed: Timestamp | null;
  narration: string;
  remarks: string;
  parent_transaction_id: number | null;
  id: number;
  created_by: number;
  updated_by: number;
  deleted_by: number | null;
  date_created: Timestamp;
  date_updated: Timestamp;
  date_deleted: Timestamp | null;
}

export interface BillingAddress {
  street?: string;
  city?: string;
  state?: string;
  country?: string;
  zipcode?: string;
}

export interface CardPayRequest {
  reference: string;
  paymentOption: 'C';
  /** ISO 3166-1 alpha-2. */
  country: string;
  card: {
    cardNumber: string;
    /** Two digits. */
    expiryMonth: string;
    /** Two digits. */
    expiryYear: string;
    cvv: string;
    /** Optional. */
    billingAddress?: BillingAddress;
  };
}

export interface PaypalPayRequest {
  reference: string;
  paymentOption: 'PAYPAL';
  country: string;
  paypal: { fullName: string; mobile: string; house?: string; billingAddress?: BillingAddress };
}

export type PayOrderRequest = CardPayRequest | PaypalPayRequest;

export interface PayResult {
  paymentDetail: {
    /** Where the customer authenticates (3-D Secure or PayPal); the merchant's RedirectUrl when final. */
    redirectUrl: string;
    recipientAccount: string | null;
    paymentReference: string;
  };
  bankTransferDetails: unknown | null;
  orderPayment: {
    orderId: number;
    orderPaymentReference: string;
    currency: string;
    statusId: number;
    orderPaymentResponseCode: string;
    orderPaymentResponseMessage: string;
    orderPaymentInstrument: string | null;
    remarks: string;
    totalAmount: number;
    fee: number;
  };
}

export interface TrackOrderEventRequest {
  orderReference: string;
  event: string;
  description?: string;
  metadata?: Record<string, unknown>;
}

export interface OrderPaymentDetail {
  orderId: number;
  orderPaymentReference: string;
  paymentOptionId: number;
  paymentOption: string;
  statusId: number;
  status: string;
  responseCode: string;
  responseMessage: string;
  orderPaymentInstrument: string | null;
  remarks: string;
  dateCreated: Timestamp;
  dateUpdated: Timestamp;
}

export interface OrderCustomer {
  customerId: string | null;
  firstName: string | null;
  lastName: string | null;
  emailAddress: string | null;
  countryShortName: string | null;
  customerGroup: string | null;
  countryId: number;
  globalStatusId: number;
  globalStatus: string | null;
  mobileNumber: string | null;
  isBlacklisted: boolean;
  reasonBlacklisted: string | null;
  dateCreated: Timestamp;
  dateUpdated: Timestamp | null;
}

export interface CardDetail {
  orderPaymentId: number;
  status: boolean;
  country: string | null;
  cardToken: string | null;
  cardExpiryMonth: string;
  cardExpiryYear: string;
  cardType: string;
  cardIssuer: string;
  cardFirstSixDigits: string;
  cardLastFourDigits: string;
  dateCreated: Timestamp;
  appEnvironmentId: number;
}

/** order/verify `data`, and the `data` of a webhook. */
export interface OrderDetails {
  orderReference: string;
  paymentReference: string;
  productName: string;
  /** What the customer is charged: the order amount plus `customerFee`. */
  totalAmountCharged: number;
  statusId: number;
  status: string;
  paymentMethod: string;
  paymentResponseCode: string;
  paymentResponseMessage: string;
  narration: string;
  remarks: string;
  currencyId: number;
  paymentLinkId: number | null;
  paymentLinkReference: string | null;
  recurringPaymentId: number | null;
  recurringPaymentReference: string | null;
  currencyName: string;
  /** The whole processing fee: subsidiaryFee + customerFee. */
  fee: number;
  feeRate: number;
  subsidiaryFee: number;
  customerFee: number;
  dateCreated: Timestamp;
  dateUpdated: Timestamp;
  datePaymentConfirmed: Timestamp | null;
  orderPayments: OrderPaymentDetail[];
  customer: OrderCustomer;
  cardDetails: CardDetail[];
  paymentLink: PaymentLink | null;
}

// ---------------------------------------------------------------- webhooks

export interface WebhookEvent {
  /** `transaction` for order changes, `test_assess` for a test ping. */
  notify: 'transaction' | 'test_assess' | (string & {});
  notifyType: 'successful' | 'failed' | (string & {});
  /** The same for every retry of one event: deduplicate by it. */
  eventId: string;
  /** True for the live environment's events, false for the test environment's. */
  livemode: boolean;
  /** Per-order sequence (1, 2, …): ignore an event not above the last one processed. */
  sequence?: number;
  data: OrderDetails;
  status: 'success';
  statusCode: string;
  message: string;
}
