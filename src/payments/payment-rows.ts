import type { Order } from '../orders/order.entity';
import type { OrderPayment } from '../orders/order-payment.entity';
import type { CardDetail } from '../orders/card-detail.entity';
import type { PaymentLink } from '../links/payment-link.entity';
import type { EnvironmentMode } from '../merchants/app-environment.entity';
import type { TimelineEntry } from './attempt-rules';
import type { OutboxRow } from '../events/outbox.service';
import type { Row } from '../db/sql';
import type { EntityRowMapper } from '../db/row-mapper';

/*
 * The rows the money path's statements (payment.queries.ts) read and write, shaped as the
 * entities (plain objects, never persisted by the entity manager).
 */

/**
 * Every payment of an order (in id order) and their cards, from the rows of a statement that
 * joins them one row per payment and card (`payment` and `card` read those columns); `own` in
 * place of its row as read (the caller's copy, which it changes).
 */
export function paymentHistory(
  rows: Row[],
  payment: EntityRowMapper<OrderPayment>,
  card: EntityRowMapper<CardDetail>,
  own?: OrderPayment | null,
): { payments: OrderPayment[]; cards: CardDetail[] } {
  const payments: OrderPayment[] = [];
  const cards: CardDetail[] = [];
  for (const row of rows) {
    const listed = payment.map(row);
    if (listed && payments[payments.length - 1]?.id !== listed.id) payments.push(listed.id === own?.id ? own : listed);
    const c = card.map(row);
    if (c) cards.push(c);
  }
  cards.sort((a, b) => a.id - b.id);
  return { payments, cards };
}

/** An order read for an attempt (locked, or not when the write is guarded), with its link and the link's type. */
export interface LockedForAttempt {
  /** With its customer. */
  order: Order;
  link: PaymentLink | null;
  /** The order's payments so far and their cards: what its settlement shows beside the new attempt. */
  payments: OrderPayment[];
  cards: CardDetail[];
  /** What the attempt's write checks is unchanged since this read. */
  guard: WriteGuard;
}

/**
 * The rows a money-path write was decided on, as read: the row versions of the order, the
 * attempt's payment and the link (PostgreSQL's `xmin`, which any update of a row changes,
 * whoever makes it; a row lock does not). The write
 * locks them in the usual order (order, payment, link) and writes nothing unless every one is
 * still as read; then its caller reads again under locks (see PlainMoneyPath).
 */
export interface WriteGuard {
  orderXmin: string;
  paymentXmin: string | null;
  linkId: number | null;
  linkXmin: string | null;
}

/** An attempt locked for its settlement: the order (with customer and link), the payment, every payment of the order and their cards. */
export interface LockedForSettlement {
  order: Order;
  payment: OrderPayment;
  payments: OrderPayment[];
  cards: CardDetail[];
  subsidiaryId: number;
  mode: EnvironmentMode;
  guard: WriteGuard;
}

/** An attempt read for its settlement or its authentication page's answer, with its link. */
export type ReadAttempt = LockedForSettlement & { link: PaymentLink | null };

/** An attempt as written: the order, payment and card rows its write answered, and the order's and payment's row versions. */
export interface WrittenAttempt {
  order: Order;
  payment: OrderPayment;
  card: CardDetail;
  orderXmin: string;
  paymentXmin: string;
}

/** The new attempt's rows, as attempt-rules.ts decided them. */
export interface NewAttempt {
  orderId: number;
  environmentId: number;
  order: Pick<Order, 'statusId' | 'paymentMethod' | 'paymentResponseCode' | 'paymentResponseMessage' | 'updatedAt'>;
  payment: Pick<
    OrderPayment,
    | 'reference'
    | 'paymentOptionId'
    | 'paymentOption'
    | 'statusId'
    | 'responseCode'
    | 'responseMessage'
    | 'amount'
    | 'fee'
    | 'processorToken'
    | 'processingStartedAt'
    | 'instrument'
    | 'dateCreated'
  >;
  card: Pick<CardDetail, 'country' | 'cardExpiryMonth' | 'cardExpiryYear' | 'cardType' | 'cardFirstSixDigits' | 'cardLastFourDigits'>;
  entry: TimelineEntry;
  guard: WriteGuard;
}

/** A settlement's writes: the order, payment and card as changed, the timeline entries, the outbox event (with delivery and NOTIFY). */
export interface SettlementWrite {
  order: Order;
  payment: OrderPayment;
  card: CardDetail | null;
  entries: TimelineEntry[];
  event: OutboxRow;
  guard: WriteGuard;
}
