import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException, type EntityManager, type MikroORM } from '@mikro-orm/postgresql';
import { LockMode } from '@mikro-orm/core';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../shared/clock';
import { Order } from '../orders/order.entity';
import { canTransitionDispute, newDisputeStatus, transitionDispute, type DisputeStatus } from './payment-state';
import { processorCallClock, type DisputeNotice, type PaymentProcessor, type PaymentProcessors } from './processor';
import { Dispute } from './dispute.entity';
import type { DisputeSteps } from './dispute-steps';
import { disputeOpening, type DisputeRefusal } from './dispute-opening';
import { disputableAmount } from './refund.queries';

/** The decisions a processor notice may bring, in the engine's words. */
const DECIDED: Partial<Record<DisputeNotice['status'], DisputeStatus>> = { won: 'WON', lost: 'LOST' };

/** What one change did: whether it changed a dispute, and wrote a webhook delivery; or why it refused to open one. */
interface Change {
  changed: boolean;
  delivery: boolean;
  refused?: DisputeRefusal;
}

const UNCHANGED: Change = { changed: false, delivery: false };

/** A notice that names a payment (opened) or a dispute (decided) this engine does not have. */
const UNMATCHED: Change = { changed: false, delivery: false };

/**
 * What one run of the dispute jobs did; `unmatched` are the notices nothing could be attached to,
 * `refused` those of a known payment that may not open a dispute on it (both acknowledged and
 * logged at warn), `failed` those whose change failed (logged at error, left unacknowledged).
 */
export interface DisputeJobsRun {
  applied: number;
  expired: number;
  resent: number;
  unmatched: DisputeNotice[];
  refused: Array<{ notice: DisputeNotice; refusal: DisputeRefusal }>;
  failed: Array<{ notice: DisputeNotice; err: unknown }>;
}

/** Answers younger than this are left to the request that is still sending them. */
const RESEND_GRACE_MS = 5_000;

/**
 * The dispute job, run every `DISPUTE_POLL_INTERVAL_MS` in each instance (a run never overlaps
 * the previous one):
 * - the processor's notices (a dispute opened, or decided) are read and applied once through the
 *   transitions table, each acknowledged only after its change committed, so a crash reads it again;
 * - disputes that still need a response past `evidenceDueBy` are lost (`expiry`);
 * - answers the processor did not take (a crash, a failed call) are sent again, keyed by the
 *   dispute's id.
 * Every change is made under the dispute's row lock, so several instances may run it at once; a
 * dispute is opened under its order's row lock too, the one a refund takes, so the two never
 * both take the same money.
 */
export class DisputeJobs {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly processors: PaymentProcessors,
    private readonly steps: DisputeSteps,
    private readonly clock: Clock,
    private readonly wakeWebhooks: () => void,
  ) {}

  start(intervalMs: number, log: FastifyBaseLogger): void {
    if (intervalMs <= 0 || this.timer) return;
    const run = async () => {
      try {
        const { unmatched, refused, failed, ...done } = await this.runOnce();
        // A notice that could not be applied stays unacknowledged (read again next run); the others go on.
        for (const { notice: n, err } of failed)
          log.error(
            { err, event: 'dispute.notice_failed', disputeReference: n.reference, orderReference: n.orderReference, status: n.status },
            'dispute notice not applied',
          );
        // Money the processor says is disputed, on a payment or dispute this engine does not know:
        // acknowledged (read again, it would fill every run), so the operator must hear of it here.
        for (const n of unmatched)
          log.warn(
            {
              event: 'dispute.unmatched',
              disputeReference: n.reference,
              orderReference: n.orderReference,
              status: n.status,
              amount: n.amount,
              currency: n.currency,
            },
            'dispute notice for an unknown payment or dispute',
          );
        // Likewise a notice of a payment it knows but may not open that dispute on (DisputeRefusal, dispute-opening.ts, says why).
        for (const { notice: n, refusal } of refused)
          log.warn(
            {
              event: 'dispute.refused',
              refusal,
              disputeReference: n.reference,
              orderReference: n.orderReference,
              status: n.status,
              amount: n.amount,
              currency: n.currency,
            },
            'dispute notice refused: no dispute opened',
          );
        if (done.applied || done.expired || done.resent) log.info(done, 'dispute jobs ran');
      } catch (err) {
        log.error({ err }, 'dispute jobs failed');
      }
    };
    this.timer = setInterval(() => {
      this.running ??= run().finally(() => (this.running = undefined));
    }, intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One run of every dispute job; how many notices were applied, disputes expired and answers sent again. */
  async runOnce(limit = 100): Promise<DisputeJobsRun> {
    const { applied, unmatched, refused, failed } = await this.applyProcessorNotices(limit);
    const expired = await this.expireOverdue(limit);
    const resent = await this.resendAnswers(limit);
    return { applied, expired, resent, unmatched, refused, failed };
  }

  /** Reads each processor's unacknowledged notices and applies each apart: how many changed a dispute, those that matched nothing or were refused, those that failed. */
  async applyProcessorNotices(limit = 100): Promise<Pick<DisputeJobsRun, 'applied' | 'unmatched' | 'refused' | 'failed'>> {
    let applied = 0;
    const unmatched: DisputeNotice[] = [];
    const refused: DisputeJobsRun['refused'] = [];
    const failed: DisputeJobsRun['failed'] = [];
    for (const processor of [this.processors.test, this.processors.live]) {
      if (!processor) continue;
      for (const notice of await processor.disputeNotices(limit)) {
        let change: Change;
        try {
          change = await this.apply(notice);
        } catch (err) {
          // One notice the database refuses (an amount it cannot hold, a reason too long) must not
          // stop every other merchant's notices, nor the deadlines after them.
          failed.push({ notice, err });
          continue;
        }
        if (change === UNMATCHED) unmatched.push(notice);
        else if (change.refused) refused.push({ notice, refusal: change.refused });
        else if (change.changed) applied += 1;
        await processor.acknowledgeDisputeNotice(notice.reference, notice.status);
      }
    }
    return { applied, unmatched, refused, failed };
  }

  /** Loses every dispute still needing a response past its deadline (business clock); returns how many. */
  async expireOverdue(limit = 100): Promise<number> {
    const rows: Array<{ id: string }> = await this.orm.em
      .getConnection()
      .execute(`select id from dispute where status = 'NEEDS_RESPONSE' and evidence_due_by <= ? order by evidence_due_by limit ?`, [this.clock.now(), limit]);
    let expired = 0;
    for (const { id } of rows) {
      const { changed } = await this.change(async (em) => {
        const dispute = await em.findOneOrFail(Dispute, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
        if (dispute.status !== 'NEEDS_RESPONSE' || dispute.evidenceDueBy > this.clock.now()) return UNCHANGED;
        return this.decide(em, dispute, 'LOST', 'expiry');
      });
      if (changed) expired += 1;
    }
    return expired;
  }

  /** Sends again the answers the processor has not taken (older than a few seconds, real time); returns how many it took. */
  async resendAnswers(limit = 100): Promise<number> {
    const rows: Array<{ id: string; processor_reference: string; evidence: string | null; status: DisputeStatus; mode: 'test' | 'live' }> = await this.orm.em
      .getConnection()
      .execute(
        `select d.id, d.processor_reference, d.evidence, d.status, e.mode from dispute d join app_environment e on e.id = d.environment_id
          where d.answered_at is not null and d.answer_sent_at is null and d.answered_at <= ? order by d.answered_at limit ?`,
        [new Date(processorCallClock().getTime() - RESEND_GRACE_MS), limit],
      );
    let resent = 0;
    for (const row of rows) {
      const processor: PaymentProcessor | null = row.mode === 'test' ? this.processors.test : this.processors.live;
      if (!processor) continue;
      // Accepted disputes were answered without evidence; every other answer was evidence.
      await processor.answerDispute({
        disputeReference: row.processor_reference,
        evidence: row.status === 'ACCEPTED' ? null : row.evidence,
        idempotencyKey: row.id,
      });
      await this.orm.em.getConnection().execute(`update dispute set answer_sent_at = now() where id = ? and answer_sent_at is null`, [row.id]);
      resent += 1;
    }
    return resent;
  }

  /** Applies one notice: opens the dispute, or records the processor's decision; UNMATCHED when it names nothing known, `refused` when it may not open one. */
  private async apply(notice: DisputeNotice): Promise<Change> {
    try {
      return await this.change(async (em) => {
        const dispute = await em.findOne(Dispute, { processorReference: notice.reference }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
        if (notice.status === 'needs_response') return dispute ? UNCHANGED : this.open(em, notice);
        if (!dispute) return UNMATCHED;
        const decided = DECIDED[notice.status];
        // A notice the table does not allow (already decided, or accepted by the merchant) changes nothing.
        if (!decided || !canTransitionDispute(dispute.status, decided, 'processor')) return UNCHANGED;
        return this.decide(em, dispute, decided, 'processor');
      });
    } catch (err) {
      // Another instance opened the same dispute at the same moment: applied once, by it.
      if (err instanceof UniqueConstraintViolationException) return UNCHANGED;
      throw err;
    }
  }

  private async open(em: EntityManager, notice: DisputeNotice): Promise<Change> {
    // The order's row lock, the one a refund of it takes (RefundQueries.lockOrder): a dispute and a
    // refund of one order are checked one at a time, and what is left to dispute is read after it
    // was granted, so it sees every refund committed by those that held it (and a refund after
    // this one sees the open dispute, and is refused).
    const order = await em.findOne(Order, { processorReference: notice.orderReference }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    // A dispute of a payment the engine does not know: nothing to attach it to.
    if (!order) return UNMATCHED;
    // One the engine knows, that this notice may not open a dispute on: nothing opened either.
    const opening = disputeOpening(order, notice, await disputableAmount((sql, params) => em.execute(sql, params), order.id));
    if ('refused' in opening) return { ...UNCHANGED, refused: opening.refused };
    const dispute = em.create(Dispute, {
      id: randomUUID(),
      order,
      environment: order.environment,
      amount: opening.amount.toFixed(2),
      currency: order.currency,
      reason: notice.reason,
      status: newDisputeStatus('processor'),
      evidenceDueBy: notice.evidenceDueBy,
      processorReference: notice.reference,
    });
    const { delivery } = await this.steps.record(em, dispute, order, 'opened', 'system');
    return { changed: true, delivery };
  }

  private async decide(em: EntityManager, dispute: Dispute, to: DisputeStatus, actor: 'processor' | 'expiry'): Promise<Change> {
    transitionDispute(dispute, to, actor);
    dispute.decidedAt = new Date();
    const order = await em.findOneOrFail(Order, { id: dispute.order.id });
    const { delivery } = await this.steps.record(em, dispute, order, to === 'WON' ? 'won' : 'lost', 'system', actor === 'expiry');
    return { changed: true, delivery };
  }

  /** One change in its own transaction; the webhook dispatcher is woken once it committed a delivery. True when it changed something. */
  private async change(work: (em: EntityManager) => Promise<Change>): Promise<Change> {
    const done = await this.orm.em.fork().transactional(work);
    if (done.delivery) this.wakeWebhooks();
    return done;
  }
}
