import { notFound } from '../shared/errors';

/**
 * Order status ids of the legacy interface (docs/api.md), plus 3 (Processing): a payment attempt is recorded
 * and the processor is being called; it is settled from the processor's answer (or, after a
 * crash, from the processor's own record of the attempt). 6 (Authorized) and 7 (Voided) belong
 * to orders captured later (docs/capture.md): the money is held, then taken (Successful) or
 * released (Voided).
 */
export const OrderStatus = { Initiated: 1, PendingAuthentication: 2, Processing: 3, Failed: 4, Successful: 5, Authorized: 6, Voided: 7 } as const;
export type OrderStatusId = (typeof OrderStatus)[keyof typeof OrderStatus];

/** How the legacy interface names each status. */
export const ORDER_STATUS_NAMES: Record<number, string> = {
  1: 'Initiated',
  2: 'pending authentication', // spelled as the legacy interface answers it (docs/api.md)
  3: 'Processing',
  4: 'Failed',
  5: 'Successful',
  6: 'Authorized',
  7: 'Voided',
};

/** Settled: nothing will change the order any more (no requery needed). Authorized is not: it is captured or voided later. */
export const isFinalStatus = (statusId: number): boolean =>
  statusId === OrderStatus.Successful || statusId === OrderStatus.Failed || statusId === OrderStatus.Voided;

/** The timeline event of a new order (the timeline's vocabulary starts with it). */
export const ORDER_CREATED_EVENT = 'order.created';

export const ORDER_NOT_FOUND = 'Order not found at the moment';
export const orderNotFound = () => notFound(ORDER_NOT_FOUND, '13');
