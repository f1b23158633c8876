import type { EntityManager } from '@mikro-orm/postgresql';
import { formatMoney, Money } from '../shared/money';
import type { Order } from '../orders/order.entity';
import { TimelineEvents, type TimelineService } from '../timeline/timeline.service';
import type { OutboxService } from '../events/outbox.service';
import type { Dispute } from './dispute.entity';
import { disputeView, type DisputeView } from './dispute-view';

/** The steps of a dispute the order's timeline records; all but the evidence are also webhook events. */
export type DisputeStep = 'opened' | 'evidence_submitted' | 'accepted' | 'won' | 'lost';

const TIMELINE_EVENT: Record<DisputeStep, string> = {
  opened: TimelineEvents.disputeOpened,
  evidence_submitted: TimelineEvents.disputeEvidenceSubmitted,
  accepted: TimelineEvents.disputeAccepted,
  won: TimelineEvents.disputeWon,
  lost: TimelineEvents.disputeLost,
};

/**
 * What every step of a dispute writes beside its status, in the caller's transaction (after the
 * dispute is flushed): the order's timeline entry and, but for the evidence (the merchant's own
 * act, answered by the mutation), the webhook event `{ notify: "dispute", notifyType: <step> }`
 * in the outbox. Returns the dispute as shown and whether a delivery was written (the caller
 * wakes this instance's dispatcher after commit).
 */
export class DisputeSteps {
  constructor(
    private readonly timeline: TimelineService,
    private readonly outbox: OutboxService,
  ) {}

  async record(em: EntityManager, dispute: Dispute, order: Order, step: DisputeStep, source: 'system' | 'merchant', expired = false) {
    const money = formatMoney(dispute.amount, dispute.currency);
    const amount = { amount: new Money(dispute.amount).toFixed(2), currency: dispute.currency };
    const described: Record<DisputeStep, [string, Record<string, unknown>]> = {
      opened: [`Dispute of ${money} opened: ${dispute.reason}`, { ...amount, reason: dispute.reason, evidenceDueBy: dispute.evidenceDueBy.toISOString() }],
      evidence_submitted: ['Evidence submitted for the dispute', {}],
      accepted: [`Dispute of ${money} accepted`, amount],
      won: [`Dispute of ${money} won`, {}],
      lost: [
        expired ? `Dispute of ${money} lost: no answer before the deadline` : `Dispute of ${money} lost`,
        { ...amount, ...(expired ? { expired: true } : {}) },
      ],
    };
    const [description, metadata] = described[step];
    this.timeline.record(em, order, TIMELINE_EVENT[step], source, description, { disputeId: dispute.id, ...metadata });
    await em.flush();
    const view: DisputeView = disputeView(dispute, order.reference);
    if (step === 'evidence_submitted') return { view, delivery: false };
    const delivery = await this.outbox.recordOrderEvent(em, {
      environmentId: dispute.environment.id,
      orderId: order.id,
      notify: 'dispute',
      notifyType: step,
      data: view,
    });
    return { view, delivery };
  }
}
