import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlRunner, type RunSql } from '../db/sql';
import { formatMoney, Money } from '../shared/money';
import { TimelineEvents } from '../timeline/timeline.service';
import type { OutboxService } from '../events/outbox.service';
import { transitionRefund } from './payment-state';
import type { RefundResult } from './processor';
import type { Refund } from './refund.entity';
import type { RefundOfOrder, RefundQueries } from './refund.queries';
import { refundView, type RefundView } from './refund-view';

/** A refund as its request recorded it (what its settlement shows), or to be read by id. */
export type RefundToSettle = RefundOfOrder;

/**
 * The only caller of `transitionRefund` for settling: a processor answer (or its record, on
 * reconciliation) applied to a PENDING refund, once, in one statement with the order's timeline
 * entry and the refund's webhook event (transactional outbox), written only while the refund is
 * still PENDING. A refund already settled (by a concurrent reconciliation) is answered as it stands.
 */
export class RefundSettlement {
  private readonly run: RunSql;

  constructor(
    orm: MikroORM,
    private readonly queries: RefundQueries,
    private readonly outbox: OutboxService,
    /** Wakes this instance's webhook dispatcher after a commit that wrote a delivery. */
    private readonly wakeWebhooks: () => void,
  ) {
    this.run = sqlRunner(orm);
  }

  /** Settles the refund `refundId` (as its request recorded it, when `recorded` is given: nothing is read first). */
  async settle(
    refundId: string,
    result: RefundResult,
    actor: 'processor' | 'reconciliation',
    recorded?: RefundToSettle,
  ): Promise<{ changed: boolean; view: RefundView }> {
    const found = recorded?.refund.id === refundId ? recorded : await this.queries.byId(this.run, refundId);
    if (!found) throw new Error(`refund ${refundId} not found`);
    const { refund, orderReference } = found;
    if (refund.status !== 'PENDING') return { changed: false, view: refundView(refund, orderReference) };
    const settled: Refund = { ...refund };
    const succeeded = result.kind === 'succeeded';
    transitionRefund(settled, succeeded ? 'SUCCEEDED' : 'FAILED', actor);
    settled.processorReference = result.reference;
    settled.failureReason = result.kind === 'failed' ? result.reason : null;
    settled.updatedAt = new Date();
    const money = formatMoney(refund.amount, refund.currency);
    const reconciled = actor === 'reconciliation' ? { reconciled: true } : {};
    const view = refundView(settled, orderReference);
    const event = await this.outbox.composeOrderEvent(this.run, {
      environmentId: refund.environment.id,
      orderId: refund.order.id,
      notify: 'refund',
      notifyType: succeeded ? 'succeeded' : 'failed',
      data: view,
    });
    const changed = await this.queries.settle(this.run, {
      refundId,
      status: settled.status,
      processorReference: settled.processorReference,
      failureReason: settled.failureReason,
      at: settled.updatedAt,
      entry: {
        event: succeeded ? TimelineEvents.refundSucceeded : TimelineEvents.refundFailed,
        description: succeeded ? `Refund of ${money} succeeded` : `Refund of ${money} failed: ${settled.failureReason}`,
        metadata: succeeded
          ? { refundId, amount: new Money(refund.amount).toFixed(2), currency: refund.currency, ...reconciled }
          : { refundId, failureReason: settled.failureReason, ...reconciled },
      },
      event,
    });
    if (!changed) {
      // Settled meanwhile by another: answered as it now stands.
      const now = await this.queries.byId(this.run, refundId);
      return { changed: false, view: refundView(now!.refund, now!.orderReference) };
    }
    if (event.url !== null) this.wakeWebhooks();
    return { changed: true, view };
  }
}
