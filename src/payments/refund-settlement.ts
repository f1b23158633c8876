import type { MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import { formatMoney, Money } from '../shared/money';
import { TimelineEvents, type TimelineService } from '../timeline/timeline.service';
import type { OutboxService } from '../events/outbox.service';
import { transitionRefund } from './payment-state';
import type { RefundResult } from './processor';
import { Refund } from './refund.entity';
import { refundView, type RefundView } from './refund-view';

/**
 * The only caller of `transitionRefund` for settling: a processor answer (or its record, on
 * reconciliation) applied to a PENDING refund under the refund's row lock, once; then, in the
 * same transaction, the order's timeline and the refund's webhook event (transactional outbox).
 * A refund already settled (by a concurrent reconciliation) is answered as it stands.
 */
export class RefundSettlement {
  constructor(
    private readonly orm: MikroORM,
    private readonly timeline: TimelineService,
    private readonly outbox: OutboxService,
    /** Wakes this instance's webhook dispatcher after a commit that wrote a delivery. */
    private readonly wakeWebhooks: () => void,
  ) {}

  async settle(refundId: string, result: RefundResult, actor: 'processor' | 'reconciliation'): Promise<{ changed: boolean; view: RefundView }> {
    const settled = await this.orm.em.fork().transactional(async (em) => {
      const refund = await em.findOneOrFail(Refund, { id: refundId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      await em.populate(refund, ['order']);
      const order = refund.order;
      if (refund.status !== 'PENDING') return { changed: false, delivery: false, view: refundView(refund, order.reference) };
      const succeeded = result.kind === 'succeeded';
      transitionRefund(refund, succeeded ? 'SUCCEEDED' : 'FAILED', actor);
      refund.processorReference = result.reference;
      refund.failureReason = result.kind === 'failed' ? result.reason : null;
      const money = formatMoney(refund.amount, refund.currency);
      const reconciled = actor === 'reconciliation' ? { reconciled: true } : {};
      this.timeline.record(
        em,
        order,
        succeeded ? TimelineEvents.refundSucceeded : TimelineEvents.refundFailed,
        'system',
        succeeded ? `Refund of ${money} succeeded` : `Refund of ${money} failed: ${refund.failureReason}`,
        succeeded
          ? { refundId: refund.id, amount: new Money(refund.amount).toFixed(2), currency: refund.currency, ...reconciled }
          : { refundId: refund.id, failureReason: refund.failureReason, ...reconciled },
      );
      await em.flush();
      const view = refundView(refund, order.reference);
      const delivery = await this.outbox.recordOrderEvent(em, {
        environmentId: refund.environment.id,
        orderId: order.id,
        notify: 'refund',
        notifyType: succeeded ? 'succeeded' : 'failed',
        data: view,
      });
      return { changed: true, delivery, view };
    });
    if (settled.delivery) this.wakeWebhooks();
    return { changed: settled.changed, view: settled.view };
  }
}
