import { CheckoutApiError } from './errors';
import { encryptPayload, parseEncryptionKey, type ParsedEncryptionKey } from './encryption';
import type {
  CreatedOrder,
  CreateOrderRequest,
  CreatePaymentLinkRequest,
  EditPaymentLinkRequest,
  EnvelopeA,
  EnvelopeB,
  FeeResult,
  Frequency,
  Bank,
  OrderDetails,
  OrderFeeRequest,
  OrderStatusRecord,
  PaymentLink,
  PaymentLinkResult,
  PaymentLinkTypesResponse,
  PayOrderRequest,
  PayResult,
  TrackOrderEventRequest,
} from './types';

export type FetchLike = (
  input: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
) => Promise<{
  status: number;
  headers: { get(name: string): string | null };
  text(): Promise<string>;
}>;

export interface CheckoutClientOptions {
  /** The service's base URL, e.g. `https://checkout.example.com` (no trailing path). */
  baseUrl: string;
  /** Public key for most calls; the private key is needed for order verification. */
  apiKey: string;
  /** Needed for the Encrypted endpoints (order create, fee, status, track, pay). */
  encryptionKey?: string;
  /** A fetch implementation; the global one by default. */
  fetch?: FetchLike;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

export interface RequestOptions {
  /** `Idempotency-Key` for POST and PATCH: a retry with the same key and body gets the first answer. */
  idempotencyKey?: string;
  /** Another api-key for this call only (e.g. the private key for one verification). */
  apiKey?: string;
  signal?: AbortSignal;
}

/** What a call answered besides its body. */
export interface ResponseMeta {
  status: number;
  /** True when the answer is the stored one of an earlier request with the same idempotency key. */
  idempotentReplayed: boolean;
  requestId: string | null;
}

/**
 * The REST interface, one method per endpoint. Each method answers the documented body
 * (Envelope A, Envelope B, or the bare list) and throws `CheckoutApiError` for an error body.
 * Encrypted endpoints take the plaintext object and encrypt it with the client's encryption key.
 */
export class CheckoutClient {
  private readonly baseUrl: string;
  private readonly fetchImpl: FetchLike;
  private parsedKey: ParsedEncryptionKey | undefined;
  /** Status, replay flag and request id of the last answer. */
  lastResponse: ResponseMeta | null = null;

  constructor(private readonly options: CheckoutClientOptions) {
    if (!options.baseUrl) throw new Error('baseUrl is required.');
    if (!options.apiKey) throw new Error('apiKey is required.');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    const f = options.fetch ?? (globalThis.fetch as unknown as FetchLike | undefined);
    if (!f) throw new Error('No fetch implementation: pass one as options.fetch.');
    this.fetchImpl = f;
  }

  // ------------------------------------------------------------ payment links
  // Creating, editing, activating and disabling links need a client made with the private key
  // (the public key gets 403); listing accepts either key.

  createPaymentLink(body: CreatePaymentLinkRequest, options?: RequestOptions): Promise<EnvelopeA<PaymentLinkResult>> {
    return this.call('POST', '/checkout/links/create', body, options);
  }

  editPaymentLink(id: number | string, body: EditPaymentLinkRequest, options?: RequestOptions): Promise<EnvelopeA<PaymentLinkResult>> {
    return this.call('PATCH', `/checkout/links/${encodeURIComponent(String(id))}/edit`, body, options);
  }

  activatePaymentLink(id: number | string, options?: RequestOptions): Promise<EnvelopeA<null>> {
    return this.call('PATCH', `/checkout/links/${encodeURIComponent(String(id))}/status/activate`, undefined, options);
  }

  disablePaymentLink(id: number | string, options?: RequestOptions): Promise<EnvelopeA<null>> {
    return this.call('PATCH', `/checkout/links/${encodeURIComponent(String(id))}/status/disable`, undefined, options);
  }

  /** The environment's links, newest first (a bare array); `id` narrows it to one link. */
  listPaymentLinks(query: { id?: number } = {}, options?: RequestOptions): Promise<PaymentLink[]> {
    const qs = query.id !== undefined ? `?id=${encodeURIComponent(String(query.id))}` : '';
    return this.call('GET', `/checkout/links/all${qs}`, undefined, options);
  }

  paymentLinkTypes(options?: RequestOptions): Promise<PaymentLinkTypesResponse> {
    return this.call('GET', '/checkout/links/types', undefined, options);
  }

  /** Stops a recurring payment (subscription): no renewal is sent to the processor afterwards (the message tells of one already sent). */
  cancelRecurringPayment(reference: string, options?: RequestOptions): Promise<EnvelopeA<unknown>> {
    return this.call('PATCH', `/checkout/links/recurringpayment/${encodeURIComponent(reference)}/cancel`, undefined, options);
  }

  frequencies(options?: RequestOptions): Promise<EnvelopeA<Frequency[]>> {
    return this.call('GET', '/checkout/frequencies', undefined, options);
  }

  banks(options?: RequestOptions): Promise<EnvelopeA<Bank[]>> {
    return this.call('GET', '/checkout/banks', undefined, options);
  }

  // ------------------------------------------------------------ orders (Encrypted unless noted)

  /** statusCode `01` on success. */
  createOrder(plaintext: CreateOrderRequest, options?: RequestOptions): Promise<EnvelopeA<CreatedOrder>> {
    return this.call('POST', '/checkout/order/create', this.encrypted(plaintext), options);
  }

  orderFee(plaintext: OrderFeeRequest, options?: RequestOptions): Promise<EnvelopeA<FeeResult>> {
    return this.call('POST', '/checkout/order/fee', this.encrypted(plaintext), options);
  }

  orderStatus(reference: string, options?: RequestOptions): Promise<EnvelopeB<OrderStatusRecord>> {
    return this.call('POST', '/checkout/order/status', this.encrypted({ reference }), options);
  }

  trackOrderEvent(plaintext: TrackOrderEventRequest, options?: RequestOptions): Promise<EnvelopeA<null>> {
    return this.call('POST', '/checkout/order/event/track', this.encrypted(plaintext), options);
  }

  /**
   * statusCode `02` with `paymentDetail.redirectUrl` when the customer must authenticate
   * (3-D Secure, PayPal); `00` when final. A decline without authentication throws
   * `CheckoutApiError` with the decline code (`51`, `54`, …) and HTTP 402.
   */
  payOrder(plaintext: PayOrderRequest, options?: RequestOptions): Promise<EnvelopeA<PayResult>> {
    return this.call('POST', '/checkout/order/pay', this.encrypted(plaintext), options);
  }

  /** Plain JSON (not encrypted); needs the private key (the client's, or `options.apiKey`). */
  verifyOrder(reference: string, options?: RequestOptions): Promise<EnvelopeA<OrderDetails>> {
    return this.call('POST', '/checkout/order/verify', { reference }, options);
  }

  // ------------------------------------------------------------ plumbing

  /** `{ data }` for an Encrypted endpoint. */
  encrypted(plaintext: object): { data: string } {
    if (!this.options.encryptionKey) throw new Error('This endpoint needs an encryptionKey in the CheckoutClient options.');
    this.parsedKey ??= parseEncryptionKey(this.options.encryptionKey);
    return { data: encryptPayload(plaintext, this.parsedKey) };
  }

  /** Any REST call: answers the parsed body on 2xx, throws `CheckoutApiError` otherwise. */
  async call<T>(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', ...(this.options.headers ?? {}), 'api-key': options.apiKey ?? this.options.apiKey };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey !== undefined) {
      if (method === 'GET') throw new Error('An idempotency key applies to POST and PATCH only.');
      headers['idempotency-key'] = options.idempotencyKey;
    }
    const res = await this.fetchImpl(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: options.signal,
    });
    const text = await res.text();
    this.lastResponse = {
      status: res.status,
      idempotentReplayed: res.headers.get('idempotent-replayed') === 'true',
      requestId: res.headers.get('x-request-id'),
    };
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (res.status >= 200 && res.status < 300 && parsed !== undefined && !isErrorBody(parsed)) return parsed as T;
    const retryAfter = res.headers.get('retry-after');
    const errorBody = isErrorBody(parsed) ? parsed : undefined;
    throw new CheckoutApiError(
      errorBody?.statusCode ?? errorBody?.status_code ?? `HTTP_${res.status}`,
      res.status,
      errorBody?.message ?? `HTTP ${res.status}${text ? `: ${text.slice(0, 200)}` : ''}`,
      parsed ?? text,
      retryAfter !== null && /^[0-9]+$/.test(retryAfter) ? Number(retryAfter) : null,
    );
  }
}

function isErrorBody(value: unknown): value is { status: 'failed'; statusCode?: string; status_code?: string; message?: string } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { status?: unknown }).status === 'failed';
}
