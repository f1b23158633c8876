import type { PaymentProcessor } from '../../src/payments/processor';

type Call = 'authorizeCard' | 'refund';

/**
 * Network faults between the engine and a processor, put on one of its calls (and taken off by
 * `restore`): the processor itself stays the real one.
 */
export interface ProcessorFault {
  restore(): void;
}

/**
 * The call is slow on the network: it reaches the processor only when `arrive` is called (and
 * `restore` lets a held call through too).
 */
export function delayedCall(processor: PaymentProcessor, call: Call): ProcessorFault & { arrive(): void } {
  const original = processor[call] as (request: unknown) => Promise<unknown>;
  let arrive!: () => void;
  const arrived = new Promise<void>((resolve) => (arrive = resolve));
  (processor as unknown as Record<Call, unknown>)[call] = async (request: unknown) => {
    await arrived;
    return original.call(processor, request);
  };
  return {
    arrive,
    restore: () => {
      arrive();
      (processor as unknown as Record<Call, unknown>)[call] = original;
    },
  };
}

/**
 * The call is sent and its connection is reset; the call itself reaches the processor only just
 * before the engine closes its key (between reconciliation's lookup and its close).
 */
export function landsJustBeforeClose(processor: PaymentProcessor, call: Call): ProcessorFault {
  const original = processor[call] as (request: unknown) => Promise<unknown>;
  const close = processor.closeKey;
  let sent: unknown;
  (processor as unknown as Record<Call, unknown>)[call] = async (request: unknown) => {
    sent = request;
    throw new Error('connection reset by the acquirer');
  };
  processor.closeKey = async (key) => {
    await original.call(processor, sent);
    return close.call(processor, key);
  };
  return {
    restore: () => {
      (processor as unknown as Record<Call, unknown>)[call] = original;
      processor.closeKey = close;
    },
  };
}
