/**
 * A failed REST call: the service's code (`VAL400`, `13`, `02`, `100`, `400`, `401`, `403`,
 * `429`, a decline code such as `51`, …), the HTTP status and the message, as sent.
 */
export class CheckoutApiError extends Error {
  constructor(
    /** The service's error code, from `statusCode` or `status_code`; `HTTP_<status>` when the body has none. */
    readonly code: string,
    /** The HTTP status of the answer. */
    readonly status: number,
    message: string,
    /** The parsed error body, or the raw text when it was not JSON. */
    readonly body: unknown,
    /** Seconds to wait before retrying, from `Retry-After` (rate limits). */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = 'CheckoutApiError';
  }
}

/** A GraphQL answer with errors; `code` is the first error's `extensions.code`. */
export class GraphQLRequestError extends Error {
  constructor(
    readonly code: string | null,
    readonly status: number,
    readonly errors: ReadonlyArray<{ message: string; path?: ReadonlyArray<string | number>; extensions?: Record<string, unknown> }>,
    /** Partial data, when some fields resolved. */
    readonly data: unknown,
  ) {
    super(errors[0]?.message ?? `GraphQL request failed with HTTP ${status}`);
    this.name = 'GraphQLRequestError';
  }
}
