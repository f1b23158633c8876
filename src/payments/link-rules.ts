import type { EntityManager } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { PaymentLink } from '../links/payment-link.entity';
import { hasLimit, linkRefusal, usedUp } from '../links/link-status';
import type { PaymentLinkService } from '../links/payment-link.service';
import { type Order } from '../orders/order.entity';
import { OrderStatus } from '../orders/order-status';
import type { OrderStatusChange } from '../events/order-status-bus';

/** Statuses that use a link up: paid, and (before an attempt) payments in progress. */
const PAID = [OrderStatus.Successful] as const;
const PAID_OR_IN_PROGRESS = [OrderStatus.Successful, OrderStatus.Processing, OrderStatus.PendingAuthentication] as const;

/**
 * Supersedes one unauthenticated attempt (an order PendingAuthentication, locked by the caller):
 * it fails with Z3. Answers whether it did.
 */
export type Supersede = (em: EntityManager, orderId: number, by: Order, changes: OrderStatusChange[]) => Promise<boolean>;

/**
 * A payment-link order's rules (links/link-status.ts), checked under the link's row lock so
 * concurrent payments on one link are serialised.
 *
 * - Before an attempt (`attempt`), payments in progress count too. On a link that can be used
 *   up (single charge, or a Limit), an unauthenticated attempt nobody is answering right now
 *   (an abandoned 3-D Secure or PayPal page) must not block it: when the link would refuse the
 *   new attempt, such attempts are superseded, oldest first, until it has room.
 * - When the processor approved (`settle`), only paid orders count.
 *
 * Initiated orders never count (an order nobody managed to pay uses nothing up).
 */
export class LinkRules {
  constructor(
    private readonly links: PaymentLinkService,
    private readonly supersede: Supersede,
  ) {}

  async lockAndCheck(em: EntityManager, order: Order, stage: 'attempt' | 'settle', changes: OrderStatusChange[]): Promise<PaymentLink> {
    const link = await em.findOneOrFail(PaymentLink, { id: order.paymentLink!.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, populate: ['type'] });
    if (!link.isActive) throw linkRefusal('DISABLED');
    const statusIds = stage === 'settle' ? PAID : PAID_OR_IN_PROGRESS;
    const usage = () => this.links.usage(em, link.id, { statusIds, excludeOrderId: order.id, customerId: order.customer?.id ?? null });
    let refusal = usedUp(link, await usage());
    if (refusal && stage === 'attempt' && hasLimit(link)) {
      for (const id of await this.abandonedAttempts(em, link, order)) {
        if (!(await this.supersede(em, id, order, changes))) continue;
        refusal = usedUp(link, await usage());
        if (!refusal) break;
      }
    }
    if (refusal) throw linkRefusal(refusal);
    return link;
  }

  /** The link's other orders awaiting authentication, oldest first. SKIP LOCKED: one being answered at this moment is left alone (it still counts). */
  private async abandonedAttempts(em: EntityManager, link: PaymentLink, order: Order): Promise<number[]> {
    const rows: Array<{ id: number }> = await em
      .getConnection()
      .execute(
        `select id from checkout_order where payment_link_id = ? and status_id = ? and id <> ? order by id for update skip locked`,
        [link.id, OrderStatus.PendingAuthentication, order.id],
        'all',
        em.getTransactionContext(),
      );
    return rows.map((r) => r.id);
  }
}
