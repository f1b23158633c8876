import type { MikroORM } from '@mikro-orm/postgresql';
import { isDeadlock, sqlRunner, sqlTransactions, type RunSql, type SqlTransaction } from '../db/sql';
import type { Clock } from '../shared/clock';
import { Listeners } from '../shared/listeners';
import type { AuditOrigin, AuditService } from '../merchants/audit/audit.service';
import type { OrderAggregate, OrderService } from '../orders/order.service';
import type { OutboxRow, OutboxService } from '../events/outbox.service';
import type { OrderStatusChange } from '../events/order-status-bus';
import type { FinalProcessorResult } from './processor';
import type { AuthorizationAction } from './authorization-action.entity';
import { settleActionRows, settledAuditEntry } from './authorization-rules';
import type { ActionWrite, AuthorizationQueries, LockedAction, LockedForClaim } from './authorization.queries';
import type { PaymentSettlement } from './settlement';

/** What a settlement did: whether it settled the action, and the order as written (a confirmed action). */
export interface SettledAction {
  changed: boolean;
  aggregate: OrderAggregate | null;
}

/** A pending action as its claim recorded it, with the order's rows the claim read under its lock. */
export interface ClaimedAction {
  action: Pick<AuthorizationAction, 'id' | 'kind' | 'actor' | 'amount' | 'quote' | 'state' | 'responseCode' | 'responseMessage' | 'settledAt'>;
  rows: LockedForClaim;
}

/**
 * The one settlement of every capture and void (the merchant's, the clock's expiry, the
 * reconciliation's): a processor answer applied to a pending action once, in one statement
 * writing the action, the order and payment (a confirmed action), the timeline entry, the outbox
 * event with its delivery and NOTIFY, and the audit entry. Given the claim (the merchant's
 * request, the clock's expiry), it starts from the rows the claim read and writes with no
 * transaction and no read: the order locked first, as on every path, and, for a confirmed
 * action, only while the order, its payment and its link are still those rows (their xmin);
 * always only while the action is pending. When that write writes nothing (a row changed, the
 * action was settled elsewhere first, or the write was a deadlock's victim), and with no claim at
 * hand (the reconciliation), the rows are read again under their locks (order, action, payment)
 * and written in that transaction.
 */
export class ActionSettlement {
  private readonly transaction: SqlTransaction;
  private readonly sql: RunSql;
  private readonly conflicts = new Listeners<'capture_void'>();

  constructor(
    orm: MikroORM,
    private readonly queries: AuthorizationQueries,
    private readonly payments: PaymentSettlement,
    private readonly orders: OrderService,
    private readonly outbox: OutboxService,
    private readonly clock: Clock,
    private readonly audit?: AuditService,
  ) {
    this.transaction = sqlTransactions(orm);
    this.sql = sqlRunner(orm);
  }

  /** Called each time the write from the claim's rows wrote nothing and the settlement ran under locks. */
  onGuardConflict(listener: (step: 'capture_void') => void): () => void {
    return this.conflicts.add(listener);
  }

  /** Settles a pending action (by id, or as claimed) with `result`. */
  async settle(target: number | ClaimedAction, result: FinalProcessorResult, origin: AuditOrigin | null): Promise<SettledAction> {
    if (typeof target === 'number') return this.settleLocked(target, result, origin);
    if (target.rows.payment) {
      const changes: OrderStatusChange[] = [];
      // The claim's rows are this request's own: changed in place, as the locked way changes its own.
      const rows: LockedAction = { ...target.rows, action: target.action as AuthorizationAction };
      const { write, aggregate } = await this.compose(this.sql, rows, result, origin, changes);
      if (await this.writeFromClaim(write, target)) {
        this.payments.committed(changes);
        return { changed: true, aggregate };
      }
      this.conflicts.emit('capture_void');
    }
    return this.settleLocked(target.action.id, result, origin);
  }

  /** The write from the claim's rows; false when it wrote nothing. */
  private async writeFromClaim(write: ActionWrite, claimed: ClaimedAction): Promise<boolean> {
    try {
      return await this.queries.writeSettlement(this.sql, write, claimed.rows.versions);
    } catch (err) {
      if (!isDeadlock(err)) throw err;
      return false;
    }
  }

  private async settleLocked(actionId: number, result: FinalProcessorResult, origin: AuditOrigin | null): Promise<SettledAction> {
    const changes: OrderStatusChange[] = [];
    const settled = await this.transaction(async (run) => {
      const locked = await this.queries.lockForSettlement(run, actionId);
      if (!locked) throw new Error(`authorization action ${actionId} not found`);
      if (locked.action.state !== 'pending') return { changed: false, aggregate: null };
      if (!locked.payment) throw new Error(`order ${locked.order.id} has no Authorized payment for its pending ${locked.action.kind}`);
      const { write, aggregate } = await this.compose(run, locked, result, origin, changes);
      if (!(await this.queries.writeSettlement(run, write))) throw new Error(`authorization action ${actionId} changed under its lock`);
      return { changed: true, aggregate };
    });
    this.payments.committed(changes);
    return settled;
  }

  /** The transitions table applied to the rows (changed in place), with the event and audit entry a confirmed action writes. */
  private async compose(
    run: RunSql,
    rows: LockedAction,
    result: FinalProcessorResult,
    origin: AuditOrigin | null,
    changes: OrderStatusChange[],
  ): Promise<{ write: ActionWrite; aggregate: OrderAggregate | null }> {
    const { order, action } = rows;
    const payment = rows.payment!;
    const { entry, outcome } = settleActionRows(order, payment, action, result, this.clock.now());
    let event: OutboxRow | null = null;
    let aggregate: OrderAggregate | null = null;
    if (outcome) {
      // The event's sequence number is written with the status change (one update of the order).
      order.eventSequence += 1;
      order.version += 1;
      order.updatedAt = payment.dateUpdated = new Date();
      aggregate = await this.orders.aggregateOfRows(rows, rows.subsidiaryId, run);
      const { change, row } = await this.outbox.composeOrderChange(run, aggregate, outcome.status);
      event = row;
      changes.push(change);
      this.payments.noteOutcome(changes, { ...outcome, environmentId: row.environmentId, reference: order.reference });
    }
    // The audit entry is written by the settlement's statement, with the order.
    const audit = outcome && this.audit ? this.audit.stamped(settledAuditEntry(rows, origin)) : null;
    return { write: { action, orderChanged: outcome !== null, order, payment, entry, event, audit }, aggregate };
  }
}
