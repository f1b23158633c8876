import { GraphQLRequestError } from './errors';
import type { FetchLike } from './client';
import { REFUND_FIELDS, type CaptureMethod, type CaptureOrderInput, type GqlRefund, type RefundOrderInput, type VoidOrderInput } from './after-sale';
import { DISPUTE_FIELDS, type DisputeConnection, type DisputesArgs, type GqlDispute, type SubmitDisputeEvidenceInput } from './disputes';
import { openSubscription, type Subscription, type SubscriptionHandlers, type WebSocketConstructor } from './subscription';

export type { Subscription, SubscriptionHandlers, WebSocketConstructor, WebSocketLike } from './subscription';

/** A GraphQL document that carries the types of its result and variables. */
export interface TypedOperation<TData, TVariables> {
  readonly document: string;
  /** Never set; only carries the types. */
  readonly __types?: (variables: TVariables) => TData;
}

export function operation<TData, TVariables = Record<string, never>>(document: string): TypedOperation<TData, TVariables> {
  return { document };
}

/** Exact decimal string, e.g. "12500.00": GraphQL never carries money as floats. */
export type Decimal = string;
/** ISO 8601 date-time at UTC, e.g. "2026-11-23T10:15:30.000Z". */
export type DateTimeISO = string;
export type FeeBearer = 'MERCHANT' | 'CUSTOMER';

// ---------------------------------------------------------------- result types

export interface GqlPaymentLink {
  id: number;
  name: string;
  description: string | null;
  reference: string;
  isActive: boolean;
  amount: Decimal | null;
  currency: string;
  paymentLinkUrl: string;
  paymentLinkCode: 'SC' | 'MC' | 'SUB';
  paymentLinkType: string;
  authOption: 'AUTH' | 'NOAUTH';
  limit: number | null;
  /** MANUAL: its orders' payments are held until captured or voided. */
  captureMethod: CaptureMethod;
}

export interface PaymentLinkConnection {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  edges: Array<{ cursor: string; node: GqlPaymentLink }>;
}

export interface PaymentLinkFilter {
  isActive?: boolean;
  currency?: string;
  search?: string;
  createdFrom?: DateTimeISO;
  createdTo?: DateTimeISO;
}

export interface CreatePaymentLinkInput {
  name: string;
  description: string;
  paymentType: 'SC' | 'MC' | 'SUB';
  currency?: string;
  authOption?: 'AUTH' | 'NOAUTH';
  amount?: Decimal | null;
  limit?: number | null;
  mobile?: string | null;
  backgroundImage?: string | null;
  website?: string | null;
  /** Default AUTOMATIC; subscription links are always AUTOMATIC. */
  captureMethod?: CaptureMethod;
}

export interface GqlOrder {
  orderReference: string;
  paymentReference: string;
  productName: string;
  /** The amount of the goods, as the merchant gave it. */
  amount: Decimal;
  /** amount + customerFee. */
  totalAmountCharged: Decimal;
  statusId: number;
  status: string;
  paymentMethod: string;
  paymentResponseCode: string;
  paymentResponseMessage: string;
  currencyName: string;
  /** subsidiaryFee + customerFee. */
  fee: Decimal;
  feeRate: Decimal;
  subsidiaryFee: Decimal;
  customerFee: Decimal;
  paymentLinkId: number | null;
  dateCreated: DateTimeISO;
  dateUpdated: DateTimeISO;
  datePaymentConfirmed: DateTimeISO | null;
  captureMethod: CaptureMethod;
  /** What was held when a MANUAL order's payment was authorized; once captured, `amount` is the amount captured. */
  amountAuthorized: Decimal | null;
  orderPayments: Array<{
    orderPaymentReference: string;
    paymentOption: string;
    statusId: number;
    status: string;
    responseCode: string;
    responseMessage: string;
  }>;
  customer: { firstName: string | null; lastName: string | null; emailAddress: string | null; countryShortName: string | null; mobileNumber: string | null };
  cardDetails: Array<{ cardType: string; cardFirstSixDigits: string; cardLastFourDigits: string; cardExpiryMonth: string; cardExpiryYear: string }>;
  /** The sum of the SUCCEEDED refunds. */
  amountRefunded: Decimal;
  /** The most a refund asked now may take: the balance while the order may be refunded (Successful), else "0.00". */
  amountRefundable: Decimal;
  /** Oldest first. */
  refunds: GqlRefund[];
  /** Oldest first. */
  disputes: GqlDispute[];
}

export interface TimelineEntry {
  id: string;
  event: string;
  description: string | null;
  /** `system` or `merchant`. */
  source: string;
  metadata: unknown;
  createdAt: DateTimeISO;
}

export interface RotatedKeys {
  publicKey: string | null;
  privateKey: string | null;
  encryptionKey: string | null;
  previousKeysExpireAt: DateTimeISO;
}

export interface GqlMerchant {
  subsidiary: { id: number; name: string; country: string; supportEmail: string };
  environment: 'TEST' | 'LIVE';
  encryptionKey: string;
  feeBearer: FeeBearer;
}

export interface GqlFeeQuote {
  amount: Decimal;
  fee: Decimal;
  feeRate: Decimal;
  subsidiaryFee: Decimal;
  customerFee: Decimal;
  totalChargedAmount: Decimal;
  paymentOption: 'C' | 'PAYPAL';
  currency: string;
  bearer: string;
}

export interface OrderStatusChange {
  reference: string;
  statusId: number;
  status: string;
  /** Per-order sequence: drop an event older than one already seen. */
  sequence: number;
  eventId: string;
}

// ---------------------------------------------------------------- operations

const LINK_FIELDS = 'id name description reference isActive amount currency paymentLinkUrl paymentLinkCode paymentLinkType authOption limit captureMethod';
const ORDER_FIELDS = `orderReference paymentReference productName amount totalAmountCharged statusId status paymentMethod
  paymentResponseCode paymentResponseMessage currencyName fee feeRate subsidiaryFee customerFee paymentLinkId
  dateCreated dateUpdated datePaymentConfirmed captureMethod amountAuthorized
  orderPayments { orderPaymentReference paymentOption statusId status responseCode responseMessage }
  customer { firstName lastName emailAddress countryShortName mobileNumber }
  cardDetails { cardType cardFirstSixDigits cardLastFourDigits cardExpiryMonth cardExpiryYear }
  amountRefunded amountRefundable refunds { ${REFUND_FIELDS} } disputes { ${DISPUTE_FIELDS} }`;

/** The typed operations the client's methods run; usable with `GraphQLClient.request` too. */
export const operations = {
  merchant: operation<{ merchant: GqlMerchant }>(
    `query Merchant { merchant { subsidiary { id name country supportEmail } environment encryptionKey feeBearer } }`,
  ),
  paymentLinks: operation<{ paymentLinks: PaymentLinkConnection }, { first?: number; after?: string; filter?: PaymentLinkFilter }>(
    `query PaymentLinks($first: Int, $after: String, $filter: PaymentLinkFilterInput) {
      paymentLinks(first: $first, after: $after, filter: $filter) {
        totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ${LINK_FIELDS} } } } }`,
  ),
  createPaymentLink: operation<{ createPaymentLink: GqlPaymentLink }, { input: CreatePaymentLinkInput }>(
    `mutation CreatePaymentLink($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { ${LINK_FIELDS} } }`,
  ),
  order: operation<{ order: GqlOrder }, { reference: string }>(`query Order($reference: String!) { order(reference: $reference) { ${ORDER_FIELDS} } }`),
  refundOrder: operation<{ refundOrder: GqlRefund }, { input: RefundOrderInput }>(
    `mutation RefundOrder($input: RefundOrderInput!) { refundOrder(input: $input) { ${REFUND_FIELDS} } }`,
  ),
  captureOrder: operation<{ captureOrder: GqlOrder }, { input: CaptureOrderInput }>(
    `mutation CaptureOrder($input: CaptureOrderInput!) { captureOrder(input: $input) { ${ORDER_FIELDS} } }`,
  ),
  voidOrder: operation<{ voidOrder: GqlOrder }, { input: VoidOrderInput }>(
    `mutation VoidOrder($input: VoidOrderInput!) { voidOrder(input: $input) { ${ORDER_FIELDS} } }`,
  ),
  disputes: operation<{ disputes: DisputeConnection }, DisputesArgs>(
    `query Disputes($first: Int, $after: String, $status: DisputeStatus) {
      disputes(first: $first, after: $after, status: $status) { pageInfo { hasNextPage endCursor } edges { cursor node { ${DISPUTE_FIELDS} } } } }`,
  ),
  submitDisputeEvidence: operation<{ submitDisputeEvidence: GqlDispute }, { input: SubmitDisputeEvidenceInput }>(
    `mutation SubmitDisputeEvidence($input: SubmitDisputeEvidenceInput!) { submitDisputeEvidence(input: $input) { ${DISPUTE_FIELDS} } }`,
  ),
  acceptDispute: operation<{ acceptDispute: GqlDispute }, { id: string }>(`mutation AcceptDispute($id: ID!) { acceptDispute(id: $id) { ${DISPUTE_FIELDS} } }`),
  orderTimeline: operation<{ orderTimeline: TimelineEntry[] }, { reference: string }>(
    `query OrderTimeline($reference: String!) { orderTimeline(reference: $reference) { id event description source metadata createdAt } }`,
  ),
  feeQuote: operation<{ feeQuote: GqlFeeQuote }, { amount: Decimal; paymentOption: 'C' | 'PAYPAL'; currency?: string }>(
    `query FeeQuote($amount: Decimal!, $paymentOption: PaymentOption!, $currency: String) {
      feeQuote(amount: $amount, paymentOption: $paymentOption, currency: $currency) {
        amount fee feeRate subsidiaryFee customerFee totalChargedAmount paymentOption currency bearer } }`,
  ),
  setWebhookUrl: operation<{ setWebhookUrl: { webhookUrl: string | null } }, { url: string | null }>(
    `mutation SetWebhookUrl($url: String) { setWebhookUrl(url: $url) { webhookUrl } }`,
  ),
  rotateKeys: operation<{ rotateKeys: RotatedKeys }, { input: { keys: Array<'PUBLIC' | 'PRIVATE' | 'ENCRYPTION'>; graceSeconds?: number } }>(
    `mutation RotateKeys($input: RotateKeysInput!) { rotateKeys(input: $input) { publicKey privateKey encryptionKey previousKeysExpireAt } }`,
  ),
  updateMerchantSettings: operation<{ updateMerchantSettings: { feeBearer: FeeBearer } }, { input: { feeBearer?: FeeBearer } }>(
    `mutation UpdateMerchantSettings($input: MerchantSettingsInput!) { updateMerchantSettings(input: $input) { feeBearer } }`,
  ),
  orderStatusChanged: operation<{ orderStatusChanged: OrderStatusChange }, { reference?: string | null }>(
    `subscription OrderStatusChanged($reference: String) { orderStatusChanged(reference: $reference) { reference statusId status sequence eventId } }`,
  ),
};

// ---------------------------------------------------------------- client

export interface GraphQLClientOptions {
  baseUrl: string;
  /** The merchant's public or private key (operations on order data need the private key). */
  apiKey?: string;
  /** The platform admin token, for admin operations such as createMerchant. */
  adminToken?: string;
  fetch?: FetchLike;
  /** For subscriptions; the global WebSocket by default. */
  webSocketImpl?: WebSocketConstructor;
}

/** A small GraphQL client over fetch (queries, mutations) and graphql-ws (subscriptions). */
export class GraphQLClient {
  private readonly endpoint: string;
  private readonly fetchImpl: FetchLike;

  constructor(private readonly options: GraphQLClientOptions) {
    if (!options.baseUrl) throw new Error('baseUrl is required.');
    this.endpoint = `${options.baseUrl.replace(/\/+$/, '')}/graphql`;
    const f = options.fetch ?? (globalThis.fetch as unknown as FetchLike | undefined);
    if (!f) throw new Error('No fetch implementation: pass one as options.fetch.');
    this.fetchImpl = f;
  }

  /** Runs a query or mutation; throws `GraphQLRequestError` when the answer carries errors. */
  async request<TData, TVariables>(op: TypedOperation<TData, TVariables> | string, variables?: TVariables): Promise<TData> {
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.options.apiKey) headers['api-key'] = this.options.apiKey;
    if (this.options.adminToken) headers['x-admin-token'] = this.options.adminToken;
    const res = await this.fetchImpl(this.endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify({ query: typeof op === 'string' ? op : op.document, variables: variables ?? {} }),
    });
    const text = await res.text();
    let body: { data?: TData | null; errors?: GraphQLRequestError['errors'] } | undefined;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (body?.errors?.length) {
      throw new GraphQLRequestError(String(body.errors[0]?.extensions?.code ?? '') || null, res.status, body.errors, body.data ?? null);
    }
    if (!body || body.data === undefined || body.data === null || res.status >= 400) {
      throw new GraphQLRequestError(null, res.status, [{ message: `GraphQL request failed with HTTP ${res.status}` }], null);
    }
    return body.data;
  }

  async merchant(): Promise<GqlMerchant> {
    return (await this.request(operations.merchant)).merchant;
  }

  async paymentLinks(args: { first?: number; after?: string; filter?: PaymentLinkFilter } = {}): Promise<PaymentLinkConnection> {
    return (await this.request(operations.paymentLinks, args)).paymentLinks;
  }

  /** Needs the private key (the public key gets FORBIDDEN). */
  async createPaymentLink(input: CreatePaymentLinkInput): Promise<GqlPaymentLink> {
    return (await this.request(operations.createPaymentLink, { input })).createPaymentLink;
  }

  /** Needs the private key. */
  async order(reference: string): Promise<GqlOrder> {
    return (await this.request(operations.order, { reference })).order;
  }

  /**
   * Refunds a Successful order in full (no `amount`: all that remains) or in part; private key.
   * Answers the settled refund, or PENDING when the processor has not answered yet. Give an
   * `idempotencyKey` to send it again safely: the same key and input refund once.
   */
  async refundOrder(input: RefundOrderInput): Promise<GqlRefund> {
    return (await this.request(operations.refundOrder, { input })).refundOrder;
  }

  /**
   * Takes all (no `amount`) or part of an Authorized order's held money, once: the order, now
   * Successful. Private key. Give an `idempotencyKey` to send it again safely after a timeout: the
   * same key and input answer the first capture (the order as it now stands) and capture nothing more.
   */
  async captureOrder(input: CaptureOrderInput): Promise<GqlOrder> {
    return (await this.request(operations.captureOrder, { input })).captureOrder;
  }

  /** Releases the money held for an Authorized order: the order becomes Voided. Private key. An `idempotencyKey` makes a retry answer the first void. */
  async voidOrder(input: VoidOrderInput): Promise<GqlOrder> {
    return (await this.request(operations.voidOrder, { input })).voidOrder;
  }

  /** The key's environment's disputes, newest first, of one `status` or all; private key. */
  async disputes(args: DisputesArgs = {}): Promise<DisputeConnection> {
    return (await this.request(operations.disputes, args)).disputes;
  }

  /**
   * Answers a NEEDS_RESPONSE dispute with evidence, once, before `evidenceDueBy`: the dispute,
   * now UNDER_REVIEW until the processor decides WON or LOST. Private key. Refusals: `DisputeErrorCode`.
   */
  async submitDisputeEvidence(input: SubmitDisputeEvidenceInput): Promise<GqlDispute> {
    return (await this.request(operations.submitDisputeEvidence, { input })).submitDisputeEvidence;
  }

  /** Gives up a NEEDS_RESPONSE dispute: the dispute, now ACCEPTED, its amount off the order's balance. Private key. */
  async acceptDispute(id: string): Promise<GqlDispute> {
    return (await this.request(operations.acceptDispute, { id })).acceptDispute;
  }

  /** Oldest first; needs the private key. */
  async orderTimeline(reference: string): Promise<TimelineEntry[]> {
    return (await this.request(operations.orderTimeline, { reference })).orderTimeline;
  }

  async feeQuote(args: { amount: Decimal; paymentOption: 'C' | 'PAYPAL'; currency?: string }): Promise<GqlFeeQuote> {
    return (await this.request(operations.feeQuote, args)).feeQuote;
  }

  /** Sets, or with null removes, the key's environment's webhook URL; private key. */
  async setWebhookUrl(url: string | null): Promise<{ webhookUrl: string | null }> {
    return (await this.request(operations.setWebhookUrl, { url })).setWebhookUrl;
  }

  /** New keys of the key's environment; the replaced ones work `graceSeconds` longer. Private key. */
  async rotateKeys(input: { keys: Array<'PUBLIC' | 'PRIVATE' | 'ENCRYPTION'>; graceSeconds?: number }): Promise<RotatedKeys> {
    return (await this.request(operations.rotateKeys, { input })).rotateKeys;
  }

  /** Who bears the processing fee in the key's environment; private key. */
  async updateMerchantSettings(input: { feeBearer?: FeeBearer }): Promise<{ feeBearer: FeeBearer }> {
    return (await this.request(operations.updateMerchantSettings, { input })).updateMerchantSettings;
  }

  /** Each state change of one order, or of every order of the key's environment when `reference` is omitted. */
  orderStatusChanged(reference: string | null, handlers: SubscriptionHandlers<OrderStatusChange>): Subscription {
    return this.subscribe(
      operations.orderStatusChanged,
      { reference },
      {
        next: (data) => handlers.next(data.orderStatusChanged),
        error: handlers.error,
        complete: handlers.complete,
      },
    );
  }

  /**
   * Runs a subscription over its own WebSocket with the graphql-ws protocol
   * (`graphql-transport-ws`); the api-key goes in `connectionParams`.
   */
  subscribe<TData, TVariables>(op: TypedOperation<TData, TVariables> | string, variables: TVariables, handlers: SubscriptionHandlers<TData>): Subscription {
    const Impl = this.options.webSocketImpl ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!Impl) throw new Error('No WebSocket implementation: pass one as options.webSocketImpl (e.g. the ws package).');
    const socket = new Impl(this.endpoint.replace(/^http/, 'ws'), 'graphql-transport-ws');
    return openSubscription(socket, this.options, typeof op === 'string' ? op : op.document, variables, handlers);
  }
}
