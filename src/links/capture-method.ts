import { unsupported } from '../shared/errors';

/**
 * When an approved payment's money is taken: AUTOMATIC at once (the order becomes Successful),
 * MANUAL later (the order stays Authorized until the merchant captures or voids it; docs/capture.md).
 * A payment link carries one, and every order made on the link takes it.
 */
export const CAPTURE_METHODS = ['AUTOMATIC', 'MANUAL'] as const;
export type CaptureMethod = (typeof CAPTURE_METHODS)[number];

/** A capture method as an adapter hands it over: absent means AUTOMATIC; anything else but the two is refused. */
export function readCaptureMethod(value: unknown): CaptureMethod {
  if (value === undefined || value === null || value === '') return 'AUTOMATIC';
  const text = typeof value === 'string' ? value.trim().toUpperCase() : '';
  if (!(CAPTURE_METHODS as readonly string[]).includes(text)) throw unsupported('CaptureMethod');
  return text as CaptureMethod;
}
