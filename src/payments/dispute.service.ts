import type { EntityManager, FilterQuery, MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import type { Clock } from '../shared/clock';
import { formatMoney, Money } from '../shared/money';
import type { Tenant } from '../merchants/tenant';
import { authorize } from '../merchants/authorization';
import { AuditActions, type AuditService } from '../merchants/audit/audit.service';
import { orderNotFound } from '../orders/order-status';
import { Order } from '../orders/order.entity';
import { transitionDispute, type DisputeStatus } from './payment-state';
import { notAvailableInLiveMode, processorFor, type PaymentProcessor, type PaymentProcessors } from './processor';
import { Dispute } from './dispute.entity';
import { disputeDeadlinePassed, disputeNotFound, disputeView, readDisputeId, readEvidence, type DisputeView } from './dispute-view';
import type { DisputeSteps } from './dispute-steps';

/** Where a page of disputes starts: after this one (newest first). */
export interface DisputeCursor {
  createdAt: Date;
  id: string;
}

/** The disputes of one currency opened over a period: how many, how much, and how much of it was lost (LOST or ACCEPTED). */
export interface DisputedVolume {
  currency: string;
  count: number;
  amount: string;
  lost: string;
}

/**
 * The merchant's side of disputes: reading them, and answering one while it needs a response,
 * with evidence (the processor then decides) or by accepting it. As for refunds, no processor
 * call is made inside a database transaction: (1) under the dispute's row lock the answer is
 * checked against the transitions table and recorded (timeline, audit, and for an acceptance
 * its webhook), committed; (2) the processor is handed the answer, keyed by the dispute's id;
 * (3) `answerSentAt` records that it took it. A crash or a failed call between (1) and (3) leaves
 * `answerSentAt` empty: the dispute job (dispute-jobs.ts) sends the answer again.
 */
export class DisputeService {
  /** Hears a processor call that failed (the answer is sent again by the dispute job); set by the composition root to log it. */
  onFault: (err: unknown, disputeId: string) => void = () => undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly processors: PaymentProcessors,
    private readonly steps: DisputeSteps,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly wakeWebhooks: () => void,
  ) {}

  /** Answers a dispute that needs a response with evidence: UNDER_REVIEW until the processor decides. */
  async submitEvidence(tenant: Tenant, input: { id?: unknown; text?: unknown }): Promise<DisputeView> {
    const processor = this.answering(tenant);
    const id = readDisputeId(input.id);
    const evidence = readEvidence(input.text);
    return this.answer(tenant, processor, id, evidence);
  }

  /** Gives a dispute that needs a response up: ACCEPTED, its amount taken off the order's balance. */
  async accept(tenant: Tenant, rawId: unknown): Promise<DisputeView> {
    const processor = this.answering(tenant);
    return this.answer(tenant, processor, readDisputeId(rawId), null);
  }

  /** The environment's disputes, newest first, of one status or all; `limit` rows after `after`. */
  async page(tenant: Tenant, status: DisputeStatus | null, limit: number, after?: DisputeCursor): Promise<DisputeView[]> {
    authorize(tenant, 'read');
    const where: FilterQuery<Dispute> = { environment: tenant.environmentId, ...(status ? { status } : {}) };
    if (after) where.$or = [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, id: { $lt: after.id } }];
    const rows = await this.orm.em.fork().find(Dispute, where, { orderBy: { createdAt: 'desc', id: 'desc' }, limit, populate: ['order'] });
    return rows.map((d) => disputeView(d, d.order.reference));
  }

  /** The order's disputes, oldest first. */
  async forOrder(tenant: Tenant, reference: string): Promise<DisputeView[]> {
    authorize(tenant, 'read');
    // A missing reference is an unknown order, not an order without disputes.
    if (typeof reference !== 'string' || reference === '') throw orderNotFound();
    const rows = await this.orm.em
      .fork()
      .find(Dispute, { environment: tenant.environmentId, order: { reference } }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    return rows.map((d) => disputeView(d, reference));
  }

  /** The disputes opened in [from, to), by currency (the dashboard's disputed volume). */
  async disputedVolume(tenant: Tenant, from: Date, to: Date): Promise<DisputedVolume[]> {
    authorize(tenant, 'read');
    const rows: Array<{ currency: string; count: number; amount: string; lost: string }> = await this.orm.em.getConnection().execute(
      `select currency, count(*)::int as count, sum(amount) as amount, coalesce(sum(amount) filter (where status in ('LOST', 'ACCEPTED')), 0) as lost
         from dispute where environment_id = ? and created_at >= ? and created_at < ? group by currency order by currency`,
      [tenant.environmentId, from, to],
    );
    return rows.map((r) => ({ currency: r.currency.trim(), count: r.count, amount: new Money(r.amount).toFixed(2), lost: new Money(r.lost).toFixed(2) }));
  }

  /** The processor that takes this caller's answers; refused before anything is read when the caller may not answer. */
  private answering(tenant: Tenant): PaymentProcessor {
    authorize(tenant, 'payments.write');
    const processor = processorFor(this.processors, tenant.mode);
    if (!processor) throw notAvailableInLiveMode();
    return processor;
  }

  private async answer(tenant: Tenant, processor: PaymentProcessor, id: string, evidence: string | null): Promise<DisputeView> {
    // 1. The answer recorded under the dispute's row lock, committed.
    const recorded = await this.orm.em.fork().transactional(async (em) => this.recordAnswer(em, tenant, id, evidence));
    if (recorded.delivery) this.wakeWebhooks();
    // 2. The processor takes it, with no transaction open; 3. and that is remembered.
    try {
      await processor.answerDispute({ disputeReference: recorded.processorReference, evidence, idempotencyKey: id });
      await this.orm.em.getConnection().execute(`update dispute set answer_sent_at = now() where id = ? and answer_sent_at is null`, [id]);
    } catch (err) {
      this.onFault(err, id);
    }
    return recorded.view;
  }

  private async recordAnswer(em: EntityManager, tenant: Tenant, id: string, evidence: string | null) {
    const dispute = await em.findOne(Dispute, { id, environment: tenant.environmentId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!dispute) throw disputeNotFound();
    const order = await em.findOne(Order, { id: dispute.order.id });
    if (!order) throw orderNotFound();
    const to = evidence === null ? 'ACCEPTED' : 'UNDER_REVIEW';
    // The deadline has passed: the dispute job is about to record it lost; no answer counts any more.
    if (dispute.status === 'NEEDS_RESPONSE' && dispute.evidenceDueBy <= this.clock.now()) throw disputeDeadlinePassed();
    transitionDispute(dispute, to, 'merchant');
    const now = new Date();
    dispute.answeredAt = now;
    if (evidence !== null) dispute.evidence = evidence;
    else dispute.decidedAt = now;
    const step = evidence === null ? 'accepted' : 'evidence_submitted';
    const { view, delivery } = await this.steps.record(em, dispute, order, step, 'merchant');
    const money = formatMoney(dispute.amount, dispute.currency);
    await this.audit.recordFor(
      em,
      tenant,
      evidence === null ? AuditActions.disputeAccepted : AuditActions.disputeEvidenceSubmitted,
      `dispute ${dispute.id} of order ${order.reference} for ${money}`,
    );
    return { view, delivery, processorReference: dispute.processorReference };
  }
}
