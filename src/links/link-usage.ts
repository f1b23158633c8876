import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { validationError, type DomainError } from '../shared/errors';
import { Money } from '../shared/money';
import { OrderStatus } from '../orders/order-status';
import { PaymentLink } from './payment-link.entity';
import { hasLimit, LINK_BEING_PAID_MESSAGE, linkRefusal, usedUp, type LinkShape, type LinkUsage } from './link-status';
import { DEFAULT_SUBSCRIPTION_TERMS } from './payment-link-input';

/**
 * The rules of a payment link for the orders made on it and the payments of those orders, in
 * one place: when an order is created on the link (active, its currency, its amount, its
 * subscription terms), and when one of its orders is paid (usage: single charge, Limit of
 * paying customers, abandoned attempts in the way). Reached through PaymentLinkService.
 */

/**
 * The statuses of a paid order: what a link's status (its page, the dashboard) counts. An
 * Authorized order (captured later) holds the customer's money: it uses the link up as a paid one
 * does, until it is voided.
 */
export const PAID_STATUSES: readonly number[] = [OrderStatus.Successful, OrderStatus.Authorized];

/** Statuses that use a link up: paid, and (before an attempt) payments in progress. Initiated orders never count. */
const PAID = PAID_STATUSES;
const PAID_OR_IN_PROGRESS = [...PAID_STATUSES, OrderStatus.Processing, OrderStatus.PendingAuthentication] as const;

/** A subscription's terms: how often it is charged, and how many times. */
export interface SubscriptionTerms {
  frequencyId: number;
  numberOfPayments: number;
}

/** What an order asks of the link it is made on: its money, and subscription terms it may repeat. */
export interface OrderOnLink {
  currency: { code: string; minorUnits: number };
  amount: Money;
  frequencyId: number | null;
  numberOfPayments: number | null;
}

/** Charge frequency and number of payments belong to subscription links (and their orders) only. */
export function subscriptionTermsOnly(frequencyGiven: boolean): DomainError {
  return validationError(`The ${frequencyGiven ? 'FrequencyId' : 'NumberOfPayments'} field is only for orders of subscription links (PaymentType SUB).`);
}

/**
 * The checks of an order created on `link`: the link is active; the order is in the link's
 * currency and (for a link with a fixed amount) of its amount; subscription terms only on a
 * subscription link, and there only the link's own. Answers the order's subscription terms
 * (the link's), or null for a link that sells no subscription.
 */
export function checkOrderOnLink(link: PaymentLink, order: OrderOnLink): SubscriptionTerms | null {
  if (!link.isActive) throw validationError('The payment link is not active.');
  if (link.currency !== order.currency.code) throw validationError(`The Currency field must be ${link.currency}, the currency of the payment link.`);
  if (link.amount !== null && !new Money(link.amount).eq(order.amount)) {
    throw validationError(`The Amount field must be ${new Money(link.amount).toFixed(order.currency.minorUnits)}, the amount of the payment link.`);
  }
  if (link.type.code !== 'SUB') {
    if (order.frequencyId !== null || order.numberOfPayments !== null) throw subscriptionTermsOnly(order.frequencyId !== null);
    return null;
  }
  // A subscription link's orders take the link's terms; an order may repeat them, not change them.
  const terms = {
    frequencyId: link.frequency?.id ?? DEFAULT_SUBSCRIPTION_TERMS.frequencyId,
    numberOfPayments: link.numberOfPayments ?? DEFAULT_SUBSCRIPTION_TERMS.numberOfPayments,
  };
  if (order.frequencyId !== null && order.frequencyId !== terms.frequencyId) {
    throw validationError(`The FrequencyId field must be ${terms.frequencyId}, the frequency of the payment link.`);
  }
  if (order.numberOfPayments !== null && order.numberOfPayments !== terms.numberOfPayments) {
    throw validationError(`The NumberOfPayments field must be ${terms.numberOfPayments}, the number of payments of the payment link.`);
  }
  return terms;
}

/** The order being paid, as the usage rules read it. */
export interface OrderBeingPaid {
  id: number;
  paymentLink: { id: number } | null;
  customer?: { id: number } | null;
}

/**
 * Refusal of a new attempt on a link that unauthenticated attempts nobody is answering right now
 * (abandoned 3-D Secure or PayPal pages) fill: thrown from inside the attempt's transaction,
 * which is then rolled back. The payment engine closes the oldest one's challenge at the
 * processor (never inside a transaction), settles it from what the processor says, and tries
 * the new attempt again; `refusal` is the answer when it gives up.
 */
export class AbandonedAttemptsInTheWay extends Error {
  constructor(
    /** The abandoned attempts' orders whose end makes room, oldest first. */
    readonly orderIds: number[],
    readonly refusal: DomainError,
  ) {
    super(refusal.message);
  }
}

/**
 * How far a link is used, for its rules (single charge, Limit of paying customers): the
 * link's orders in `statusIds` other than `excludeOrderId`, how many distinct customers they
 * have, and how many are `customerId`'s. Runs in the caller's transaction, under its lock of the link.
 */
export async function linkUsage(
  em: EntityManager,
  linkId: number,
  options: { statusIds: readonly number[]; excludeOrderId: number; customerId: number | null },
): Promise<LinkUsage> {
  const statusIds = options.statusIds.map((id) => Number(id)).filter(Number.isInteger);
  const rows: Array<{ orders: string; customers: string; mine: string }> = await em.getConnection().execute(
    `select count(*) as orders, count(distinct customer_id) as customers,
            count(*) filter (where customer_id = ?) as mine
       from checkout_order where payment_link_id = ? and status_id in (${statusIds.join(',')}) and id <> ?`,
    [options.customerId ?? 0, linkId, options.excludeOrderId],
    'all',
    em.getTransactionContext(),
  );
  const row = rows[0]!;
  return { orders: Number(row.orders), customers: Number(row.customers), mine: Number(row.mine) };
}

/**
 * The part of a locked link's rules that needs no count: a disabled link refuses (throws).
 * Answers whether the link can be used up (single charge, or a Limit): then its usage must be
 * counted (lockLinkForPayment); otherwise the link allows the payment.
 */
export function checkLockedLink(link: LinkShape): 'count usage' | 'allowed' {
  if (!link.isActive) throw linkRefusal('DISABLED');
  return hasLimit(link) ? 'count usage' : 'allowed';
}

/**
 * A payment-link order's rules when it is paid (link-status.ts), checked under the link's row
 * lock so concurrent payments on one link are serialised; answers the locked link.
 *
 * - Before an attempt (`attempt`), payments in progress count too. On a link that can be used
 *   up (single charge, or a Limit), an unauthenticated attempt nobody is answering right now
 *   and whose page has been open a while (an abandoned 3-D Secure or PayPal page: its
 *   authentication expires by `abandonedIfExpiringBy`) must not block it: when the link would refuse the
 *   new attempt and such attempts exist, AbandonedAttemptsInTheWay is thrown (see there). A link
 *   that paid orders alone would not refuse is refused as being paid, not as used up.
 * - When the processor approved (`settle`), only paid orders count.
 */
export async function lockLinkForPayment(
  em: EntityManager,
  order: OrderBeingPaid,
  stage: 'attempt' | 'settle',
  abandonedIfExpiringBy: Date,
): Promise<PaymentLink> {
  const link = await em.findOneOrFail(
    PaymentLink,
    { id: order.paymentLink!.id },
    { lockMode: LockMode.PESSIMISTIC_WRITE, populate: ['type'], strategy: 'select-in' },
  );
  checkLockedLink(link);
  // A link without a limit (not single charge, no Limit) is never used up: nothing to count.
  if (!hasLimit(link)) return link;
  const statusIds = stage === 'settle' ? PAID : PAID_OR_IN_PROGRESS;
  const usage = await linkUsage(em, link.id, { statusIds, excludeOrderId: order.id, customerId: order.customer?.id ?? null });
  const refusal = usedUp(link, usage);
  if (!refusal) return link;
  if (stage === 'settle') throw linkRefusal(refusal);
  const counted = await countedOrders(em, link, order);
  // Paid orders alone would let the attempt in: the link is only being paid, not used up.
  const paid = counted.filter((r) => PAID.includes(r.status_id));
  const paidOnly = usedUp(link, usageOf(paid, order));
  const answer = paidOnly ? linkRefusal(paidOnly) : validationError(LINK_BEING_PAID_MESSAGE);
  const abandoned = await abandonedAttempts(em, link, order, counted, abandonedIfExpiringBy);
  throw abandoned.length > 0 ? new AbandonedAttemptsInTheWay(abandoned, answer) : answer;
}

/** An order that uses a link up (paid, or a payment in progress), as the refusal path reads them. */
interface CountedOrder {
  id: number;
  customer_id: number | null;
  status_id: number;
}

const rowsOf = (em: EntityManager, sql: string, params: unknown[]) =>
  em.getConnection().execute(sql, params, 'all', em.getTransactionContext()) as Promise<CountedOrder[]>;

/** The link's other orders that use it up (paid, or a payment in progress), under the caller's lock of the link. */
function countedOrders(em: EntityManager, link: PaymentLink, order: OrderBeingPaid): Promise<CountedOrder[]> {
  return rowsOf(
    em,
    `select id, customer_id, status_id from checkout_order where payment_link_id = ? and status_id in (${PAID_OR_IN_PROGRESS.join(',')}) and id <> ?`,
    [link.id, order.id],
  );
}

/** The usage of `rows`, as linkUsage counts it in SQL. */
function usageOf(rows: CountedOrder[], order: OrderBeingPaid): LinkUsage {
  return {
    orders: rows.length,
    customers: new Set(rows.filter((r) => r.customer_id !== null).map((r) => r.customer_id)).size,
    mine: rows.filter((r) => r.customer_id === (order.customer?.id ?? 0)).length,
  };
}

/**
 * The fewest abandoned attempts whose end would let the link take `order`'s attempt, oldest
 * first; none when ending every one of them would not (a paid order, an attempt with the
 * processor or a page opened only a moment ago keeps the link used up). An abandoned attempt is
 * one awaiting authentication whose authentication expires by `expiringBy` (its page has been
 * open a while) and that nobody is answering at this moment (SKIP LOCKED: a page being answered
 * holds its order's lock, and it still counts). Its customer's seat is freed only with all of
 * their attempts (a customer who paid keeps it): they go together. `counted`: countedOrders.
 */
async function abandonedAttempts(em: EntityManager, link: PaymentLink, order: OrderBeingPaid, counted: CountedOrder[], expiringBy: Date): Promise<number[]> {
  const abandoned = await rowsOf(
    em,
    `select o.id, o.customer_id, o.status_id from checkout_order o
      where o.payment_link_id = ? and o.status_id = ? and o.id <> ?
        and exists (select 1 from order_payment p where p.order_id = o.id and p.status_id = ? and p.authentication_expires_at <= ?)
      order by o.id for update of o skip locked`,
    [link.id, OrderStatus.PendingAuthentication, order.id, OrderStatus.PendingAuthentication, expiringBy],
  );
  const groups = new Map<number | null, number[]>();
  for (const { id, customer_id } of abandoned) groups.set(customer_id, [...(groups.get(customer_id) ?? []), id]);
  let remaining = counted;
  const ending: number[] = [];
  for (const [customerId, ids] of groups) {
    if (!usedUp(link, usageOf(remaining, order))) break;
    const next = remaining.filter((r) => !ids.includes(r.id));
    // A customer with another order counted (paid, or with the processor) keeps their place: ending these would free nothing.
    if (next.some((r) => r.customer_id === customerId)) continue;
    remaining = next;
    ending.push(...ids);
  }
  return usedUp(link, usageOf(remaining, order)) ? [] : ending.sort((a, b) => a - b);
}
