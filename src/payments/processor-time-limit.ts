import type { PaymentProcessor } from './processor';

/** What a request answers when the processor did not answer one of its calls in time. */
export const PROCESSOR_TIMEOUT_MESSAGE =
  "The payment processor did not answer in time. The outcome will be confirmed shortly: read the order's status before trying again.";

/**
 * A processor call that failed in a way the adapters answer alike: not a fault of the service
 * (logged as a warning, never as an internal error), with its own message and GraphQL `code`, and
 * the HTTP status the REST shim answers it with (`retryAfterSeconds`: a Retry-After header).
 */
export abstract class ProcessorCallFailure extends Error {
  abstract readonly code: string;
  abstract readonly httpStatus: 503 | 504;
  abstract readonly retryAfterSeconds: number | null;
  /** The line it is logged with. */
  abstract readonly logLine: string;
}

/**
 * A processor call that did not answer within the time limit. The call itself may still reach the
 * processor: the engine stops waiting, and the attempt (refund, capture, void) stays pending, for
 * reconciliation from the processor's record of its key. Adapters answer it with 504.
 */
export class ProcessorTimeoutError extends ProcessorCallFailure {
  readonly code = 'PROCESSOR_TIMEOUT';
  readonly httpStatus = 504;
  readonly retryAfterSeconds = null;
  readonly logLine = 'processor call timed out';

  constructor(
    readonly call: string,
    readonly limitMs: number,
  ) {
    super(PROCESSOR_TIMEOUT_MESSAGE);
    this.name = 'ProcessorTimeoutError';
  }
}

/** What a request answers when a processor call it needed before recording anything failed. */
export const PROCESSOR_UNAVAILABLE_MESSAGE = 'The payment processor could not be reached; nothing was recorded. Send the request again.';

/**
 * A processor call a request needed before it could record anything failed (the processor
 * unreachable, or too slow): nothing of the request was recorded or moved, and it may be sent
 * again as it is. Adapters answer it with 503. The failed call is the `cause`.
 */
export class ProcessorUnavailableError extends ProcessorCallFailure {
  readonly code = 'PROCESSOR_UNAVAILABLE';
  readonly httpStatus = 503;
  readonly retryAfterSeconds = 5;
  readonly logLine = 'processor unavailable before anything was recorded';

  constructor(cause: unknown) {
    super(PROCESSOR_UNAVAILABLE_MESSAGE, { cause });
    this.name = 'ProcessorUnavailableError';
  }
}

type Call = Exclude<keyof PaymentProcessor, 'name'>;

/** Every call of the interface: a call added to it and not here fails to compile (`EVERY_CALL`). */
const CALLS = [
  'authorizeCard',
  'completeChallenge',
  'startPaypal',
  'completePaypal',
  'chargeToken',
  'capture',
  'voidAuthorization',
  'lookup',
  'closeKey',
  'refund',
  'lookupRefund',
  'disputeNotices',
  'acknowledgeDisputeNotice',
  'answerDispute',
] as const satisfies readonly Call[];
const EVERY_CALL: Exclude<Call, (typeof CALLS)[number]> extends never ? true : never = true;
void EVERY_CALL;

/**
 * The processor, each of its calls bounded by `limitMs` (PROCESSOR_TIMEOUT_MS): a request never
 * waits on an acquirer longer than that, and the limit stays well below the deadline after which
 * reconciliation closes an unanswered key (so a call the engine gave up on is settled from the
 * processor's record, or refused by it, never both).
 */
export function withTimeLimit(processor: PaymentProcessor, limitMs: number): PaymentProcessor {
  const limited: Record<string, unknown> = { name: processor.name };
  for (const call of CALLS) {
    const method = processor[call] as (...args: unknown[]) => Promise<unknown>;
    limited[call] = (...args: unknown[]) => within(limitMs, call, method.apply(processor, args));
  }
  return limited as unknown as PaymentProcessor;
}

function within<T>(limitMs: number, call: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ProcessorTimeoutError(call, limitMs)), limitMs);
  });
  // The race subscribes to `work`: its late failure is handled, not an unhandled rejection.
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
