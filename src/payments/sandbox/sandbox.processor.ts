import type { MikroORM } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import { isUniqueViolation, sqlRunner, type PreparedStatement, type RunSql } from '../../db/sql';
import type {
  ChallengeEnd,
  CardAuthorizationRequest,
  DisputeAnswer,
  DisputeNotice,
  ProcessorDisputeStatus,
  FinalProcessorResult,
  PaymentProcessor,
  PaypalRequest,
  ProcessorResult,
  RefundRequest,
  RefundResult,
} from '../processor';
import type { SandboxAuthorizationState } from './sandbox-authorization.entity';
import type { SandboxDisputeState } from './sandbox-dispute.entity';

/** The one-time password that authenticates in the sandbox. */
export const SANDBOX_OTP = '123456';

interface TestCard {
  code: string;
  message: string;
  issuer: string;
  /** Why the issuer declines every refund of this card; absent: refunds go through. */
  refundDecline?: string;
  /** Why the cardholder disputes every approved payment of this card; absent: never. */
  dispute?: string;
}

/** The sandbox's payment details of an authorization: what a dispute of it is filed for. */
interface Paid {
  amount: string;
  currency: string;
  reference: string;
}

/**
 * Test cards (the documented ones, plus the usual extra outcomes of acquirer sandboxes).
 * Any other Luhn-valid number is declined as a real acquirer's test environment does.
 */
export const SANDBOX_CARDS: Readonly<Record<string, TestCard>> = {
  '5123450000000008': { code: '00', message: 'Approved', issuer: 'Sandbox Bank Mastercard' },
  '4111111111111111': { code: '00', message: 'Approved', issuer: 'Sandbox Bank Visa' },
  '5060990580000217499': { code: '00', message: 'Approved', issuer: 'Sandbox Bank Verve' },
  '4000000000005126': { code: '00', message: 'Approved', issuer: 'Sandbox Bank Visa', refundDecline: 'Refund declined by the issuer' },
  '4000000000000259': { code: '00', message: 'Approved', issuer: 'Sandbox Bank Visa', dispute: 'fraudulent' },
  '4000000000000002': { code: '51', message: 'Insufficient funds', issuer: 'Sandbox Bank Visa' },
  '4000000000000069': { code: '54', message: 'Expired card', issuer: 'Sandbox Bank Visa' },
  '4000000000000119': { code: '96', message: 'System malfunction', issuer: 'Sandbox Bank Visa' },
};

const UNKNOWN_CARD: TestCard = { code: '14', message: 'Invalid card number', issuer: 'Unknown issuer' };

/** The record of a closed key: what a call arriving with it later is answered. */
const CLOSED = { code: 'Z5', message: 'Not processed: the call came after its key was closed' } as const;

/** What the sandbox answers to a refund of something it never approved. */
const NOTHING_TO_REFUND = 'No settled payment to refund';

interface Row {
  token: string;
  kind: 'card' | 'paypal' | 'charge' | 'refund' | 'capture' | 'void' | 'closed';
  outcome_code: string;
  outcome_message: string;
  issuer: string;
  state: SandboxAuthorizationState;
  result_code: string | null;
  result_message: string | null;
  refund_decline: string | null;
  dispute_reason: string | null;
}

interface DisputeRow {
  token: string;
  order_reference: string;
  amount: string;
  currency: string;
  reason: string;
  state: SandboxDisputeState;
  evidence_due_by: Date;
  answer_key: string | null;
}

/** How long the merchant has to answer a sandbox dispute. */
const SANDBOX_EVIDENCE_DAYS = 7;

/** Evidence containing this wins the sandbox dispute; any other evidence loses it. */
export const SANDBOX_WINNING_EVIDENCE = 'winning_evidence';

/**
 * The filing of a dispute for each approved authorization of `a` (the rows just written) whose
 * card is disputed: one per payment (its token), in the statement that approved it.
 */
const FILE_DISPUTE = `filed as (
  insert into sandbox_dispute (token, payment_token, order_reference, amount, currency, reason, evidence_due_by)
  select 'sbx_dispute_' || md5(a.token), a.token, a.order_reference, a.amount, a.currency, a.dispute_reason, now() + make_interval(days => ${SANDBOX_EVIDENCE_DAYS})
    from written a where a.state = 'approved' and a.dispute_reason is not null and a.amount is not null and a.order_reference is not null
  on conflict (payment_token) do nothing
)`;

/** Records a call under its key (nothing when the key has a record already), filing the dispute of a disputed card's approval. */
const REMEMBER: PreparedStatement = {
  name: 'pgw_sandbox_remember_v1',
  text: `with written as (
         insert into sandbox_authorization (token, kind, outcome_code, outcome_message, issuer, state, idempotency_key, result_code, result_message, refund_decline,
                                            dispute_reason, amount, currency, order_reference)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) on conflict (idempotency_key) do nothing returning *
       ), ${FILE_DISPUTE}
       select * from written`,
};

/** Finishes a pending authorization ($1: whether it passed; $2, $3: the failure's code and message), filing the dispute of a disputed card's approval. */
const COMPLETE: PreparedStatement = {
  name: 'pgw_sandbox_complete_v1',
  text: `with written as (
         update sandbox_authorization
            set state = case when $1::boolean and outcome_code = '00' then 'approved' else 'declined' end,
                result_code = case when $1::boolean then outcome_code else $2 end,
                result_message = case when $1::boolean then outcome_message else $3 end
          where token = $4 and idempotency_key = $5 and kind = $6 and state = 'pending'
          returning *
       ), ${FILE_DISPUTE}
       select * from written`,
};

/**
 * Closes a key ($1 token, $2 key, $3 issuer; $4 and $5, the code and message a challenge still
 * pending is declined with, when it is to be): with no record, a closed record (declined, not
 * processed) is written. Nothing when the key's record is final (or a pending challenge not to
 * decline); a row is returned when it closed.
 */
const CLOSE: PreparedStatement = {
  name: 'pgw_sandbox_close_v4',
  text: `with expired as (
           update sandbox_authorization set state = 'declined', result_code = $4, result_message = $5
            where idempotency_key = $2 and state = 'pending' and $4::text is not null returning token
         ), closed as (
           insert into sandbox_authorization (token, kind, outcome_code, outcome_message, issuer, state, idempotency_key, result_code, result_message)
           select $1, 'closed', '${CLOSED.code}', '${CLOSED.message}', $3, 'declined', $2, '${CLOSED.code}', '${CLOSED.message}'
            where not exists (select 1 from sandbox_authorization where idempotency_key = $2)
           on conflict (idempotency_key) do nothing returning token
         )
         select token from expired union all select token from closed`,
};

/** What the sandbox answers to a capture or void of an authorization it does not hold (or no longer: captured or voided). */
const UNSETTLED = { code: '14', message: 'No authorization to settle' } as const;

/**
 * A capture or void ($1 token held, $2 kind, $3 key, $4 new token, $5 approval message, $6/$7 the
 * refusal): the approved authorization is marked settled once, and the call recorded under its key,
 * approved when it marked it, else declined. When the key has a record (its first answer stands),
 * the insert's unique violation undoes the whole statement, the mark included: even a record
 * written by a transaction this one could not see yet (a key closed at that moment).
 */
const SETTLE_HELD: PreparedStatement = {
  name: 'pgw_sandbox_settle_held_v2',
  text: `with held as (
           update sandbox_authorization set settled_as = $2
            where token = $1 and kind in ('card', 'paypal') and state = 'approved' and settled_as is null
           returning issuer
         )
         insert into sandbox_authorization (token, kind, outcome_code, outcome_message, issuer, state, idempotency_key, result_code, result_message)
         select $4, $2,
                case when h.issuer is null then $6 else '00' end, case when h.issuer is null then $7 else $5 end,
                coalesce(h.issuer, '${UNKNOWN_CARD.issuer}'), case when h.issuer is null then 'declined' else 'approved' end, $3,
                case when h.issuer is null then $6 else '00' end, case when h.issuer is null then $7 else $5 end
           from (select 1) one left join held h on true
         returning *`,
};

/**
 * The test-environment acquirer. It keeps its state in its own table, reached with short
 * statements of its own, never inside the engine's transaction (the engine calls it with no
 * transaction open; the embedded database has a single connection). Every call is
 * idempotent by the caller's key: a call repeated with the same key answers what the first
 * one decided and authorizes nothing new.
 */
export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox';

  private runner?: RunSql;

  constructor(private readonly orm: MikroORM) {}

  async authorizeCard(request: CardAuthorizationRequest): Promise<ProcessorResult> {
    const card = SANDBOX_CARDS[request.cardNumber] ?? UNKNOWN_CARD;
    const final = card === UNKNOWN_CARD || !request.threeDSecure;
    const paid = { amount: request.amount, currency: request.currency, reference: request.reference };
    const row = await this.remember(request.idempotencyKey, 'card', card, final ? finalState(card) : 'pending', final ? card : null, paid);
    return toResult(row);
  }

  async completeChallenge(idempotencyKey: string, token: string, otp: string): Promise<FinalProcessorResult> {
    return this.complete(idempotencyKey, token, 'card', otp === SANDBOX_OTP, { code: 'Z1', message: 'Authentication failed' });
  }

  async startPaypal(request: PaypalRequest): Promise<ProcessorResult> {
    const paid = { amount: request.amount, currency: request.currency, reference: request.reference };
    return toResult(await this.remember(request.idempotencyKey, 'paypal', { code: '00', message: 'Approved', issuer: 'PayPal' }, 'pending', null, paid));
  }

  async completePaypal(idempotencyKey: string, token: string, approved: boolean): Promise<FinalProcessorResult> {
    return this.complete(idempotencyKey, token, 'paypal', approved, { code: '17', message: 'Customer cancelled' });
  }

  async chargeToken(request: { token: string; amount: string; currency: string; reference: string; idempotencyKey: string }): Promise<FinalProcessorResult> {
    const [saved] = await this.sql<Row>(`select * from sandbox_authorization where token = ? and kind = 'card'`, [request.token]);
    const card: TestCard = saved
      ? {
          code: saved.outcome_code,
          message: saved.outcome_message,
          issuer: saved.issuer,
          refundDecline: saved.refund_decline ?? undefined,
          dispute: saved.dispute_reason ?? undefined,
        }
      : UNKNOWN_CARD;
    const paid = { amount: request.amount, currency: request.currency, reference: request.reference };
    const row = await this.remember(request.idempotencyKey, 'charge', card, finalState(card), card, paid);
    return toResult(row) as FinalProcessorResult;
  }

  async capture(request: { token: string; amount: string; currency: string; idempotencyKey: string }): Promise<FinalProcessorResult> {
    return this.settleHeld('capture', request.token, request.idempotencyKey, { code: '00', message: 'Captured', issuer: '' });
  }

  async voidAuthorization(request: { token: string; idempotencyKey: string }): Promise<FinalProcessorResult> {
    return this.settleHeld('void', request.token, request.idempotencyKey, { code: '00', message: 'Released', issuer: '' });
  }

  /**
   * A capture or a void of an approved authorization (of a card or a PayPal approval), in one
   * statement: approved once per authorization, which it marks captured or voided; a repeated call
   * with the key answers the first decision; a capture or void of a token it holds no authorization
   * for, or of one captured or voided already (under another key), is declined.
   */
  private async settleHeld(kind: 'capture' | 'void', token: string, key: string, approved: TestCard): Promise<FinalProcessorResult> {
    let written: Row | undefined;
    try {
      [written] = await this.sql<Row>(SETTLE_HELD, [
        token,
        kind,
        key,
        `sbx_${kind}_${randomBytes(16).toString('hex')}`,
        approved.message,
        UNSETTLED.code,
        UNSETTLED.message,
      ]);
    } catch (err) {
      if (!isUniqueViolation(err, 'sandbox_authorization_idempotency_key_unique')) throw err; // the key has a record: its first answer, read below
    }
    return toResult(written ?? (await this.recordOf(key, kind))) as FinalProcessorResult;
  }

  async lookup(idempotencyKey: string): Promise<ProcessorResult | null> {
    const [row] = await this.sql<Row>(`select * from sandbox_authorization where idempotency_key = ? and kind <> 'refund'`, [idempotencyKey]);
    return row ? toResult(row) : null;
  }

  /**
   * Closes a key no call reached the sandbox with: a closed record under the key, so any later
   * call with it (an authorization, a charge, a capture, a void or a refund) is answered with that
   * record, declined or failed, and moves no money. With `expireChallenge`, a pending challenge of
   * the key is declined (expired), so a late completion gets that. Closes nothing when the key's
   * record is final.
   */
  async closeKey(idempotencyKey: string, options: { expireChallenge?: ChallengeEnd } = {}): Promise<boolean> {
    const closed = await this.sql<{ token: string }>(CLOSE, [
      `sbx_closed_${randomBytes(16).toString('hex')}`,
      idempotencyKey,
      UNKNOWN_CARD.issuer,
      options.expireChallenge?.code ?? null,
      options.expireChallenge?.message ?? null,
    ]);
    return closed.length === 1;
  }

  /**
   * Refunds an approved card, saved-card or PayPal payment, decided at once: the issuer of a card
   * that declines refunds (4000000000005126) declines each of them. The amount is the engine's to
   * keep within the balance; the sandbox checks only that the payment was approved.
   */
  async refund(request: RefundRequest): Promise<RefundResult> {
    const [paid] = request.paymentToken
      ? await this.sql<Row>(`select * from sandbox_authorization where token = ? and kind in ('card', 'paypal', 'charge')`, [request.paymentToken])
      : [];
    const decline = !paid || paid.state !== 'approved' ? NOTHING_TO_REFUND : paid.refund_decline;
    const outcome: TestCard = decline
      ? { code: 'R1', message: decline, issuer: paid?.issuer ?? UNKNOWN_CARD.issuer }
      : { code: '00', message: 'Refunded', issuer: paid!.issuer };
    return toRefundResult(await this.remember(request.idempotencyKey, 'refund', outcome, finalState(outcome), outcome));
  }

  async lookupRefund(idempotencyKey: string): Promise<RefundResult | null> {
    const [row] = await this.sql<Row>(`select * from sandbox_authorization where idempotency_key = ? and kind in ('refund', 'closed')`, [idempotencyKey]);
    return row ? toRefundResult(row) : null;
  }

  /**
   * The cardholder's bank disputes: the disputes filed or decided that the engine has not
   * acknowledged yet, oldest first.
   */
  async disputeNotices(limit: number): Promise<DisputeNotice[]> {
    const rows = await this.sql<DisputeRow>(`select * from sandbox_dispute where acknowledged is distinct from state order by created_at limit ?`, [limit]);
    return rows.map((row) => ({
      reference: row.token,
      orderReference: row.order_reference,
      amount: String(row.amount),
      currency: row.currency.trim(),
      reason: row.reason,
      evidenceDueBy: new Date(row.evidence_due_by),
      status: row.state,
    }));
  }

  async acknowledgeDisputeNotice(reference: string, status: ProcessorDisputeStatus): Promise<void> {
    await this.sql(`update sandbox_dispute set acknowledged = state where token = ? and state = ?`, [reference, status]);
  }

  /**
   * Takes the merchant's answer while the dispute needs a response, and decides at once (the
   * engine hears it through the next notice): evidence containing `winning_evidence` wins, any
   * other loses; no evidence accepts the dispute. The same answer sent again (same key) changes
   * nothing; an answer to a dispute already closed is ignored, as a real acquirer's would be.
   */
  async answerDispute(answer: DisputeAnswer): Promise<void> {
    const state: SandboxDisputeState = answer.evidence === null ? 'accepted' : answer.evidence.includes(SANDBOX_WINNING_EVIDENCE) ? 'won' : 'lost';
    const [updated] = await this.sql<DisputeRow>(
      `update sandbox_dispute set state = ?, evidence = ?, answer_key = ? where token = ? and state = 'needs_response' returning token`,
      [state, answer.evidence, answer.idempotencyKey, answer.disputeReference],
    );
    if (updated) return;
    const [row] = await this.sql<DisputeRow>(`select token from sandbox_dispute where token = ?`, [answer.disputeReference]);
    if (!row) throw new Error('sandbox: no such dispute');
  }

  /** Records a call under its key; a second call with the key gets the first call's record. An approval of a disputed card files its dispute. */
  private async remember(
    key: string,
    kind: Row['kind'],
    card: TestCard,
    state: SandboxAuthorizationState,
    result: { code: string; message: string } | null,
    paid: Paid | null = null,
  ): Promise<Row> {
    const token = `sbx_${kind}_${randomBytes(16).toString('hex')}`;
    const inserted = await this.sql<Row>(REMEMBER, [
      token,
      kind,
      card.code,
      card.message,
      card.issuer,
      state,
      key,
      result?.code ?? null,
      result?.message ?? null,
      card.refundDecline ?? null,
      card.dispute ?? null,
      paid?.amount ?? null,
      paid?.currency ?? null,
      paid?.reference ?? null,
    ]);
    return inserted[0] ?? this.recordOf(key, kind);
  }

  /** The record a call of `kind` finds under its key, written by an earlier call of that kind, or a closed key's (the call came too late to move money). */
  private async recordOf(key: string, kind: Row['kind']): Promise<Row> {
    const [existing] = await this.sql<Row>(`select * from sandbox_authorization where idempotency_key = ?`, [key]);
    if (!existing || (existing.kind !== kind && existing.kind !== 'closed')) throw new Error('sandbox: idempotency key reused for another kind of call');
    return existing;
  }

  /**
   * Finishes a pending authorization once, in one statement: passed, it answers the card's
   * outcome; not passed, `failure`. A repeated completion answers the first result.
   */
  private async complete(
    key: string,
    token: string,
    kind: 'card' | 'paypal',
    passed: boolean,
    failure: { code: string; message: string },
  ): Promise<FinalProcessorResult> {
    const [updated] = await this.sql<Row>(COMPLETE, [passed, failure.code, failure.message, token, key, kind]);
    if (updated) return toResult(updated) as FinalProcessorResult;
    const [row] = await this.sql<Row>(`select * from sandbox_authorization where token = ? and idempotency_key = ? and kind = ?`, [token, key, kind]);
    if (!row) throw new Error(`sandbox: no ${kind} authorization for this token and key`);
    return toResult(row) as FinalProcessorResult;
  }

  /** Plain SQL on the service's pool (no query builder): the two statements of a card pay and its 3-D Secure answer are prepared once per connection. */
  private sql<T>(query: string | PreparedStatement, params: unknown[]): Promise<T[]> {
    this.runner ??= sqlRunner(this.orm);
    return this.runner<T>(query, params);
  }
}

function finalState(card: TestCard): SandboxAuthorizationState {
  return card.code === '00' ? 'approved' : 'declined';
}

function toResult(row: Row): ProcessorResult {
  if (row.state === 'pending') return { kind: 'challenge', token: row.token, issuer: row.issuer };
  // A number no issuer knows gets no token: there is nothing to charge again.
  const token = row.issuer === UNKNOWN_CARD.issuer ? null : row.token;
  if (row.state === 'approved') return { kind: 'approved', token: row.token, issuer: row.issuer, code: '00', message: row.result_message ?? 'Approved' };
  return { kind: 'declined', token, issuer: row.issuer, code: row.result_code ?? row.outcome_code, message: row.result_message ?? row.outcome_message };
}

function toRefundResult(row: Row): RefundResult {
  return row.state === 'approved'
    ? { kind: 'succeeded', reference: row.token }
    : { kind: 'failed', reference: row.kind === 'closed' ? null : row.token, reason: row.result_message ?? row.outcome_message };
}
