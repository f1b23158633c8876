import type { EntityManager } from '@mikro-orm/postgresql';
import { Money } from '../shared/money';

/**
 * What is taken off an order's `total_charged_amount` (alias `o`) to leave its balance: each a
 * SQL expression of the money that has left, or is leaving, the merchant for that order.
 */
const BALANCE_DEDUCTIONS: readonly string[] = [
  // Every refund not FAILED: a PENDING refund holds its amount until the processor answers.
  `(select coalesce(sum(r.amount), 0) from refund r where r.order_id = o.id and r.status <> 'FAILED')`,
  // Every dispute LOST or ACCEPTED: the cardholder's bank took that money back.
  `(select coalesce(sum(d.amount), 0) from dispute d where d.order_id = o.id and d.status in ('LOST', 'ACCEPTED'))`,
];

/**
 * The balance of an order: what refunds may still take. `totalAmountCharged` less every
 * deduction above, in one statement of the caller's transaction (which holds the order's row
 * lock, so no concurrent refund is counted twice or missed). Exact decimal, never negative.
 */
export async function orderBalance(em: EntityManager, orderId: number): Promise<Money> {
  const rows: Array<{ balance: string }> = await em
    .getConnection()
    .execute(
      `select o.total_charged_amount - ${BALANCE_DEDUCTIONS.join(' - ')} as balance from checkout_order o where o.id = ?`,
      [orderId],
      'all',
      em.getTransactionContext(),
    );
  const balance = new Money(rows[0]?.balance ?? 0);
  return balance.isNegative() ? new Money(0) : balance;
}
