import type { MikroORM } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { isUniqueViolation, sqlRunner, sqlTransactions, type RunSql, type SqlTransaction } from '../db/sql';
import { DomainError, requiredField } from '../shared/errors';
import type { Clock } from '../shared/clock';
import { Money } from '../shared/money';
import { idempotencyKeyReused, readIdempotencyKey } from '../shared/idempotency-key';
import type { Tenant } from '../merchants/tenant';
import { authorize } from '../merchants/authorization';
import { auditOriginOf, type AuditService } from '../merchants/audit/audit.service';
import type { EnvironmentMode } from '../merchants/app-environment.entity';
import { OrderStatus, orderNotFound } from '../orders/order-status';
import type { OrderAggregate, OrderService } from '../orders/order.service';
import type { OutboxService } from '../events/outbox.service';
import type { FeeService } from '../fees/fee.service';
import {
  notAvailableInLiveMode,
  processorCallClock,
  processorFor,
  recordOfKey,
  NOT_PROCESSED,
  type PaymentProcessors,
  type ProcessorResult,
} from './processor';
import type { PaymentActor } from './payment-state';
import type { GuardedStep } from './money-path';
import type { AuthorizationAction, AuthorizationActionKind, CaptureQuote } from './authorization-action.entity';
import {
  captureAmount,
  captureAmountInvalid,
  captureQuote,
  claimRefusal,
  requestedCaptureAmount,
  sameKeyedRequest,
  type KeyedRequest,
} from './authorization-rules';
import { AuthorizationQueries, type ClaimAction, type LockedForClaim } from './authorization.queries';
import { ActionSettlement, type ClaimedAction } from './action-settlement';
import type { PaymentSettlement } from './settlement';
import type { StepFault } from './payment-jobs';
import { eachApart } from '../shared/each-apart';
import { Listeners } from '../shared/listeners';

export interface CaptureOrderInput {
  reference?: string | null;
  /** Decimal text; absent: all that was authorized. */
  amount?: string | null;
  /** The merchant's key: a retry with it answers this capture (docs/capture.md). */
  idempotencyKey?: string | null;
}

export interface VoidOrderInput {
  reference?: string | null;
  idempotencyKey?: string | null;
}

export interface CaptureServiceOptions {
  /** An authorization not captured within this is voided (AUTHORIZATION_TTL_HOURS). */
  authorizationTtlMs: number;
  /** A capture or void the processor has no record of after this long never reached it: it failed. */
  processorDeadlineMs: number;
  /** Calls younger than this are left to the request still handling them. */
  reconcileGraceMs: number;
}

const captureNotAllowed = (message: string) => new DomainError('conflict', message, 'CAPTURE_NOT_ALLOWED');
const voidNotAllowed = (message: string) => new DomainError('conflict', message, 'VOID_NOT_ALLOWED');
const refusedCode = (kind: AuthorizationActionKind) => (kind === 'capture' ? 'CAPTURE_NOT_ALLOWED' : 'VOID_NOT_ALLOWED');
/** The processor refused the capture or void: what the request (and any retry of its key) answers. */
const processorRefused = (kind: AuthorizationActionKind, message: string) =>
  new DomainError('payment_declined', `The processor refused the ${kind}: ${message}`, refusedCode(kind));
/** A retry of a key whose call is still with the processor (no answer, no record yet). */
const keyInProgress = (kind: AuthorizationActionKind) =>
  new DomainError('conflict', `The ${kind} of this idempotencyKey is still in progress: retry later.`, refusedCode(kind));

interface Claim {
  /** The action as recorded, with the order's rows read under the claim's lock: where the settlement starts from. */
  claimed: ClaimedAction;
  token: string;
  idempotencyKey: string;
  /** What the processor is asked to take (a capture): the amount plus the customer's fee on it. */
  total: string;
  currency: string;
  mode: EnvironmentMode;
}

/** How long after the processor refused an expiry void the clock asks again. */
const EXPIRY_RETRY_MS = 3_600_000;

/** What asks for a capture or a void: the merchant (by reference) or the clock (by order id). */
type Request = {
  kind: AuthorizationActionKind;
  actor: Extract<PaymentActor, 'capture' | 'void' | 'expiry'>;
  amount?: Money;
  quote?: CaptureQuote;
  /** The merchant's key and what it asks (the reference, the amount as given); absent: no key. */
  keyed?: KeyedRequest;
};

/** The claim, or the earlier action of the merchant's key (nothing recorded). */
type Claimed = { kind: 'claim'; claim: Claim } | { kind: 'earlier'; action: AuthorizationAction };

const MERCHANT_KEY_CONSTRAINT = 'authorization_action_environment_merchant_key_unique';

/**
 * Capture later (docs/capture.md): an Authorized order's money is taken (captureOrder, all or
 * part, once), released (voidOrder), or released by the clock once AUTHORIZATION_TTL_HOURS have
 * passed. As for payments, the processor is never called inside a transaction: the capture or
 * void is recorded first (an AuthorizationAction, pending, committed) under the order's row lock,
 * one pending per order, so of a capture and a void asked at the same moment exactly one reaches
 * the processor; the other is refused. The call carries the action's own idempotency key
 * (`capture:<orderId>:<random>`); its answer is applied by the settlement (action-settlement.ts, the
 * transitions table), or, when the answer was lost, from the processor's record by
 * `reconcilePending`. The merchant's optional idempotencyKey is kept on the action (unique per
 * environment): a retry of the same request answers that action (settling it first from the
 * processor's record of its key when it is still pending), another request with the key is
 * IDEMPOTENCY_KEY_REUSED, and requests of one key in this process run one after the other.
 * All of it in prepared plain SQL (authorization.queries.ts), the rules applied to the rows
 * (authorization-rules.ts). A merchant's request reads the order without locks and claims from
 * those rows in one statement that writes only while they are unchanged and nothing else is
 * pending (as the pay's guarded writes do); when it writes nothing, the claim is decided again
 * under the order's lock. So a merchant's capture is one read, a claim of one statement and a
 * settlement of one (docs/performance.md, "The money path").
 */
export class CaptureService {
  private readonly queries: AuthorizationQueries;
  private readonly actions: ActionSettlement;
  private readonly transaction: SqlTransaction;
  private readonly sql: RunSql;
  /** Hears a background step that failed for one order or action (the others go on); set by the composition root to log it. */
  onFault: StepFault = () => undefined;

  constructor(
    orm: MikroORM,
    private readonly processors: PaymentProcessors,
    settlement: PaymentSettlement,
    private readonly fees: FeeService,
    private readonly orders: OrderService,
    outbox: OutboxService,
    private readonly clock: Clock,
    private readonly options: CaptureServiceOptions,
    audit?: AuditService,
  ) {
    this.queries = new AuthorizationQueries(orm);
    this.actions = new ActionSettlement(orm, this.queries, settlement, orders, outbox, clock, audit);
    this.transaction = sqlTransactions(orm);
    this.sql = sqlRunner(orm);
  }

  /** Requests of one merchant key being handled in this process: a concurrent one waits for it (one processor call). */
  private readonly inFlight = new Map<string, Promise<unknown>>();
  private readonly claimConflicts = new Listeners<'capture_void_claim'>();

  /** Called each time a claim or a settlement from rows read before wrote nothing and the step ran again under locks. */
  onGuardConflict(listener: (step: Extract<GuardedStep, 'capture_void' | 'capture_void_claim'>) => void): () => void {
    const stops = [this.actions.onGuardConflict(listener), this.claimConflicts.add(listener)];
    return () => stops.forEach((stop) => stop());
  }

  async capture(tenant: Tenant, input: CaptureOrderInput): Promise<OrderAggregate> {
    const reference = this.begin(tenant, input.reference);
    const key = readIdempotencyKey(input.idempotencyKey);
    const keyed = key === null ? undefined : { key, kind: 'capture' as const, reference, amount: requestedCaptureAmount(input.amount) };
    return this.oncePerKey(tenant, keyed, () => this.captureNow(tenant, reference, input, keyed));
  }

  async void(tenant: Tenant, input: VoidOrderInput): Promise<OrderAggregate> {
    const reference = this.begin(tenant, input.reference);
    const key = readIdempotencyKey(input.idempotencyKey);
    const keyed = key === null ? undefined : { key, kind: 'void' as const, reference, amount: null };
    return this.oncePerKey(tenant, keyed, async () => {
      // The key's earlier action and the order, in one statement.
      const { rows, earlier } = await this.queries.peek(this.sql, tenant.environmentId, reference, keyed?.key ?? null);
      if (keyed && earlier) return this.answerEarlier(tenant, earlier, keyed);
      if (!rows) throw orderNotFound();
      return this.run(tenant, reference, { kind: 'void', actor: 'void', keyed }, rows);
    });
  }

  private async captureNow(tenant: Tenant, reference: string, input: CaptureOrderInput, keyed: KeyedRequest | undefined): Promise<OrderAggregate> {
    // The key's earlier action and the order, in one statement.
    const { rows, earlier } = await this.queries.peek(this.sql, tenant.environmentId, reference, keyed?.key ?? null);
    // A retry of the key answers what the key was first used for, whatever the order's status now.
    if (keyed && earlier) return this.answerEarlier(tenant, earlier, keyed);
    if (!rows) throw orderNotFound();
    const current = rows.order;
    if (current.statusId !== OrderStatus.Authorized) throw captureNotAllowed('Only an Authorized order can be captured, and only once.');
    const amount = captureAmount(input.amount, current.amount);
    // The fee of a part, by the merchant's rule (read outside any transaction); the terms the customer authorized bound it.
    const partFee = amount.eq(current.amount)
      ? new Money(current.fee)
      : new Money((await this.fees.compute(tenant, amount, current.paymentMethod === 'PAYPAL' ? 'PAYPAL' : 'C', current.currency)).fee);
    const quote: CaptureQuote = captureQuote(current, amount, partFee);
    return this.run(tenant, reference, { kind: 'capture', actor: 'capture', amount, quote, keyed }, rows);
  }

  /**
   * Runs `work` for a merchant key once at a time in this process: a request arriving while
   * another of the same key (and environment) is being handled waits for it to end, then finds
   * its action. Across processes the order's row lock and the key's unique index decide.
   */
  private async oncePerKey<T>(tenant: Tenant, keyed: KeyedRequest | undefined, work: () => Promise<T>): Promise<T> {
    if (!keyed) return work();
    const id = `${tenant.environmentId}:${keyed.key}`;
    for (let running = this.inFlight.get(id); running; running = this.inFlight.get(id)) await running.catch(() => undefined);
    const mine = work();
    this.inFlight.set(id, mine);
    try {
      return await mine;
    } finally {
      if (this.inFlight.get(id) === mine) this.inFlight.delete(id);
    }
  }

  /** The capture or void the merchant's key asked for before, with its order's reference, or null. */
  private async earlierOfKey(tenant: Tenant, keyed: KeyedRequest): Promise<AuthorizationAction | null> {
    return this.queries.readEarlier(this.sql, tenant.environmentId, keyed.key);
  }

  /**
   * The answer to a retry of a key: refused when it asks for something else; else the first
   * answer: the order (captured or voided), or the processor's refusal. A call still pending is
   * settled first from the processor's record of its own key (the answer was lost); with no record
   * yet, the call is still on its way and the retry is refused as in progress.
   */
  private async answerEarlier(tenant: Tenant, earlier: AuthorizationAction, keyed: KeyedRequest): Promise<OrderAggregate> {
    if (!sameKeyedRequest(earlier, keyed)) throw idempotencyKeyReused('a capture or void');
    let action = earlier;
    if (action.state === 'pending') {
      const processor = processorFor(this.processors, tenant.mode)!;
      const record = await processor.lookup(action.idempotencyKey);
      if (!record || record.kind === 'challenge') throw keyInProgress(action.kind);
      await this.actions.settle(action.id, record, auditOriginOf(tenant));
      action = (await this.earlierOfKey(tenant, keyed))!;
    }
    if (action.state === 'failed') throw processorRefused(action.kind, action.responseMessage ?? '');
    return this.orders.getAggregate(tenant, keyed.reference);
  }

  /**
   * Voids every authorization left uncaptured past AUTHORIZATION_TTL_HOURS; returns how many. An
   * order whose expiry void the processor refused is tried again an hour later, not at every run
   * (each try is an action of its own, with its own key, in the order's timeline).
   */
  async expireAuthorizations(limit = 100): Promise<number> {
    const now = this.clock.now().getTime();
    const rows = await this.sql<{ id: number }>(
      `select o.id from checkout_order o
        where o.status_id = ${OrderStatus.Authorized} and o.authorized_at <= ?
          and not exists (select 1 from authorization_action a where a.order_id = o.id and a.actor = 'expiry' and a.state = 'failed' and a.settled_at > ?)
        order by o.authorized_at limit ?`,
      [new Date(now - this.options.authorizationTtlMs), new Date(now - EXPIRY_RETRY_MS), limit],
    );
    return eachApart(
      rows,
      ({ id }) => this.expire(id),
      (err, { id }) => this.onFault(err, { orderId: id }),
    );
  }

  private async expire(id: number): Promise<boolean> {
    const claim = await this.transaction(async (run) => {
      const locked = await this.queries.lockForClaim(run, { id });
      const authorizedAt = locked?.order.authorizedAt;
      if (!locked || !authorizedAt || authorizedAt > new Date(this.clock.now().getTime() - this.options.authorizationTtlMs)) return null;
      const claimed = await this.claimLocked(run, locked, { kind: 'void', actor: 'expiry' }, null);
      return claimed === 'earlier' ? null : claimed;
    });
    const processor = claim && processorFor(this.processors, claim.mode);
    if (!claim || !processor) return false;
    const result = await processor.voidAuthorization({ token: claim.token, idempotencyKey: claim.idempotencyKey });
    return (await this.actions.settle(claim.claimed, result, null)).changed;
  }

  /**
   * Captures and voids left pending by a lost answer (a crash between the call and its
   * settlement), settled from the processor's record of their key; with no record past the
   * processor deadline the call never reached it: the key is closed at the processor (a call still
   * on its way is refused there), the action failed and the order stays
   * Authorized. Ages are real elapsed time, as for payment attempts. Returns how many were settled.
   */
  async reconcilePending(limit = 100): Promise<number> {
    const rows = await this.sql<{ id: number; idempotency_key: string; created_at: Date | string; mode: EnvironmentMode }>(
      `select a.id, a.idempotency_key, a.created_at, e.mode from authorization_action a
         join checkout_order o on o.id = a.order_id join app_environment e on e.id = o.environment_id
        where a.state = 'pending' order by a.created_at limit ?`,
      [limit],
    );
    return eachApart(
      rows,
      async (row) => {
        const age = processorCallClock().getTime() - new Date(row.created_at).getTime();
        const processor = processorFor(this.processors, row.mode);
        if (age < this.options.reconcileGraceMs || !processor) return false;
        const record = await recordOfKey<ProcessorResult>(
          processor,
          row.idempotency_key,
          (key) => processor.lookup(key),
          age >= this.options.processorDeadlineMs,
          NOT_PROCESSED,
        );
        return record !== null && record.kind !== 'challenge' && (await this.actions.settle(row.id, record, null)).changed;
      },
      (err, row) => this.onFault(err, { actionId: row.id }),
    );
  }

  /** Who may, and where: payments.write, and an environment with a processor (live mode has none yet). Answers the reference. */
  private begin(tenant: Tenant, reference: string | null | undefined): string {
    authorize(tenant, 'payments.write');
    if (!processorFor(this.processors, tenant.mode)) throw notAvailableInLiveMode();
    const ref = typeof reference === 'string' ? reference.trim() : '';
    if (!ref) throw requiredField('Reference');
    return ref;
  }

  /** Records the request (committed), calls the processor with no transaction open, applies its answer; answers the order as it then stands. */
  private async run(tenant: Tenant, reference: string, request: Request, read: LockedForClaim): Promise<OrderAggregate> {
    const origin = auditOriginOf(tenant);
    const fast = await this.claimIfUnchanged(read, request);
    const claimed: Claimed = fast ? { kind: 'claim', claim: fast } : await this.claimForMerchant(tenant, reference, request);
    if (claimed.kind === 'earlier') return this.answerEarlier(tenant, claimed.action, request.keyed!);
    const claim = claimed.claim;
    const processor = processorFor(this.processors, claim.mode)!;
    const result =
      request.kind === 'capture'
        ? await processor.capture({ token: claim.token, amount: claim.total, currency: claim.currency, idempotencyKey: claim.idempotencyKey })
        : await processor.voidAuthorization({ token: claim.token, idempotencyKey: claim.idempotencyKey });
    const settled = await this.actions.settle(claim.claimed, result, origin);
    if (result.kind !== 'approved') throw processorRefused(request.kind, result.message);
    // The order as the settlement wrote it; read again only when another settled the action first.
    return settled.aggregate ?? this.orders.getAggregate(tenant, reference);
  }

  /**
   * Step 1 of a merchant's request, the common case: the claim from the rows read without locks, in
   * one statement (committed) that writes only while the order and its payment are those rows, no
   * other capture or void of the order is pending and the merchant's key has no action. Null when
   * the rules refuse on those rows or nothing was written: `claimForMerchant` then decides under
   * the order's lock, and answers the refusal, the action in progress or the key's earlier action.
   */
  private async claimIfUnchanged(read: LockedForClaim, request: Request): Promise<Claim | null> {
    const { order, payment } = read;
    if (claimRefusal(order, payment, request.kind, request.actor, this.expiry()) || request.amount?.gt(order.amount)) return null;
    const action = this.newAction(order.id, request);
    const id = await this.queries.insertClaimIfUnchanged(this.sql, action, read);
    if (id === null) {
      this.claimConflicts.emit('capture_void_claim');
      return null;
    }
    return this.claimOf(action, id, read, request);
  }

  /**
   * Step 1 of a merchant's request, committed: under the order's row lock, the claim, or the
   * earlier action of its key if there is one (a request of the same key that got there first).
   */
  private async claimForMerchant(tenant: Tenant, reference: string, request: Request): Promise<Claimed> {
    let claimed: Claim | 'earlier' | null;
    try {
      claimed = await this.transaction(async (run) => {
        const locked = await this.queries.lockForClaim(run, { environmentId: tenant.environmentId, reference });
        if (!locked) throw orderNotFound();
        return this.claimLocked(run, locked, request, request.kind === 'capture' ? captureNotAllowed : voidNotAllowed);
      });
    } catch (err) {
      // The same key used at the same moment on another order (the key's unique index), or a
      // refusal while another process's request of the key got there first: the key's action answers.
      if (!request.keyed || !(isUniqueViolation(err, MERCHANT_KEY_CONSTRAINT) || err instanceof DomainError)) throw err;
      const earlier = await this.earlierOfKey(tenant, request.keyed);
      if (!earlier) throw err;
      return { kind: 'earlier', action: earlier };
    }
    if (claimed === 'earlier') return { kind: 'earlier', action: (await this.earlierOfKey(tenant, request.keyed!))! };
    return { kind: 'claim', claim: claimed! };
  }

  /**
   * Under the order's lock (taken by `locked`'s read): the transitions table allows the change
   * from the order's status (authorization-rules.ts), and no other capture or void of it is
   * pending (checked by the insert, a statement after the lock: it sees what the lock's earlier
   * holder committed); the request is recorded, pending. Answers 'earlier' when the merchant's key
   * has an action already. `refuse` null (the clock): answers null instead of refusing.
   */
  private async claimLocked(
    run: RunSql,
    locked: LockedForClaim,
    request: Request,
    refuse: ((message: string) => DomainError) | null,
  ): Promise<Claim | 'earlier' | null> {
    const { order, payment, environmentId } = locked;
    const fail = (message: string) => {
      if (refuse) throw refuse(message);
      return null;
    };
    const refusal = claimRefusal(order, payment, request.kind, request.actor, this.expiry());
    if (refusal) return fail(refusal);
    if (request.amount && request.amount.gt(order.amount))
      throw captureAmountInvalid(`The amount must be at most the amount authorized (${new Money(order.amount).toFixed(2)}).`);
    const action = this.newAction(order.id, request);
    const inserted = await this.queries.insertClaim(run, action, order.id, environmentId);
    if (inserted.id === null) {
      if (inserted.earlier) return 'earlier';
      return fail(`A capture or void of this order is in progress: it cannot be ${request.kind === 'capture' ? 'captured' : 'voided'} now.`);
    }
    return this.claimOf(action, inserted.id, locked, request);
  }

  /** What a capture is checked against: now, and how long an authorization holds. */
  private expiry(): { now: Date; ttlMs: number } {
    return { now: this.clock.now(), ttlMs: this.options.authorizationTtlMs };
  }

  /** The pending action a claim records for `request` on order `orderId`. */
  private newAction(orderId: number, request: Request): ClaimAction {
    // The processor's key is this action's: a retry with the merchant's key finds the action and so
    // its key. A new action is claimed only once the order's earlier one is settled refused (by the
    // processor, or failed at the deadline after its key was closed there), so no money moved under
    // an earlier key; a refusal is never replayed to a later capture or void of the order.
    return {
      kind: request.kind,
      actor: request.actor,
      amount: request.amount ? request.amount.toFixed(2) : null,
      quote: request.quote ?? null,
      merchantKey: request.keyed?.key ?? null,
      requestedAmount: request.keyed?.amount?.toFixed(2) ?? null,
      idempotencyKey: `${request.kind}:${orderId}:${randomBytes(6).toString('base64url')}`,
      createdAt: new Date(),
    };
  }

  /** The claim of a recorded action: what the processor is asked, and the rows its settlement starts from. */
  private claimOf(action: ClaimAction, id: number, rows: LockedForClaim, request: Request): Claim {
    const claimed: ClaimedAction = {
      action: { ...action, id, state: 'pending', responseCode: null, responseMessage: null, settledAt: null },
      rows,
    };
    return {
      claimed,
      token: rows.payment!.processorToken!,
      idempotencyKey: action.idempotencyKey,
      total: request.quote?.totalChargedAmount ?? rows.order.totalChargedAmount,
      currency: rows.order.currency,
      mode: rows.mode,
    };
  }
}
