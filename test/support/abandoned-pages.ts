import { ABANDONED_AFTER_MS } from '../../src/payments/settlement';

type Sql = (q: string, p?: unknown[]) => Promise<unknown>;

/**
 * The authentication pages of these orders' attempts have been open longer than a newer attempt
 * on their link leaves them to their customers (ABANDONED_AFTER_MS): they count as abandoned.
 */
export async function leavePagesOpen(sql: Sql, ...references: string[]): Promise<void> {
  for (const reference of references) {
    await sql(
      `update order_payment set authentication_expires_at = authentication_expires_at - make_interval(secs => ?)
        where status_id = 2 and order_id = (select id from checkout_order where reference = ?)`,
      [ABANDONED_AFTER_MS / 1000 + 1, reference],
    );
  }
}
