import type { MikroORM } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import type {
  CardAuthorizationRequest,
  FinalProcessorResult,
  PaymentProcessor,
  PaypalRequest,
  ProcessorResult,
  RefundRequest,
  RefundResult,
} from '../processor';
import type { SandboxAuthorizationState } from './sandbox-authorization.entity';

/** The one-time password that authenticates in the sandbox. */
export const SANDBOX_OTP = '123456';

interface TestCard {
  code: string;
  message: string;
  issuer: string;
  /** Why the issuer declines every refund of this card; absent: refunds go through. */
  refundDecline?: string;
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
  '4000000000000002': { code: '51', message: 'Insufficient funds', issuer: 'Sandbox Bank Visa' },
  '4000000000000069': { code: '54', message: 'Expired card', issuer: 'Sandbox Bank Visa' },
  '4000000000000119': { code: '96', message: 'System malfunction', issuer: 'Sandbox Bank Visa' },
};

const UNKNOWN_CARD: TestCard = { code: '14', message: 'Invalid card number', issuer: 'Unknown issuer' };

/** What the sandbox answers to a refund of something it never approved. */
const NOTHING_TO_REFUND = 'No settled payment to refund';

interface Row {
  token: string;
  kind: 'card' | 'paypal' | 'charge' | 'refund' | 'capture' | 'void';
  outcome_code: string;
  outcome_message: string;
  issuer: string;
  state: SandboxAuthorizationState;
  result_code: string | null;
  result_message: string | null;
  refund_decline: string | null;
}

/**
 * The test-environment acquirer. It keeps its state in its own table, reached with short
 * statements of its own, never inside the engine's transaction (the engine calls it with no
 * transaction open; the embedded database has a single connection). Every call is
 * idempotent by the caller's key: a call repeated with the same key answers what the first
 * one decided and authorizes nothing new.
 */
export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox';

  constructor(private readonly orm: MikroORM) {}

  async authorizeCard(request: CardAuthorizationRequest): Promise<ProcessorResult> {
    const card = SANDBOX_CARDS[request.cardNumber] ?? UNKNOWN_CARD;
    const final = card === UNKNOWN_CARD || !request.threeDSecure;
    const row = await this.remember(request.idempotencyKey, 'card', card, final ? finalState(card) : 'pending', final ? card : null);
    return toResult(row);
  }

  async completeChallenge(idempotencyKey: string, token: string, otp: string): Promise<FinalProcessorResult> {
    return this.complete(idempotencyKey, token, 'card', otp === SANDBOX_OTP, { code: 'Z1', message: 'Authentication failed' });
  }

  async startPaypal(request: PaypalRequest): Promise<ProcessorResult> {
    return toResult(await this.remember(request.idempotencyKey, 'paypal', { code: '00', message: 'Approved', issuer: 'PayPal' }, 'pending', null));
  }

  async completePaypal(idempotencyKey: string, token: string, approved: boolean): Promise<FinalProcessorResult> {
    return this.complete(idempotencyKey, token, 'paypal', approved, { code: '17', message: 'Customer cancelled' });
  }

  async chargeToken(request: { token: string; amount: string; currency: string; reference: string; idempotencyKey: string }): Promise<FinalProcessorResult> {
    const [saved] = await this.sql<Row>(`select * from sandbox_authorization where token = ? and kind = 'card'`, [request.token]);
    const card: TestCard = saved
      ? { code: saved.outcome_code, message: saved.outcome_message, issuer: saved.issuer, refundDecline: saved.refund_decline ?? undefined }
      : UNKNOWN_CARD;
    const row = await this.remember(request.idempotencyKey, 'charge', card, finalState(card), card);
    return toResult(row) as FinalProcessorResult;
  }

  async capture(request: { token: string; amount: string; currency: string; idempotencyKey: string }): Promise<FinalProcessorResult> {
    return this.settleHeld('capture', request.token, request.idempotencyKey, { code: '00', message: 'Captured', issuer: '' });
  }

  async voidAuthorization(request: { token: string; idempotencyKey: string }): Promise<FinalProcessorResult> {
    return this.settleHeld('void', request.token, request.idempotencyKey, { code: '00', message: 'Released', issuer: '' });
  }

  /**
   * A capture or a void of an approved authorization (of a card or a PayPal approval): approved,
   * once, by the key; of a token it holds no approved authorization for, declined.
   */
  private async settleHeld(kind: 'capture' | 'void', token: string, key: string, approved: TestCard): Promise<FinalProcessorResult> {
    const [held] = await this.sql<Row>(`select * from sandbox_authorization where token = ? and kind in ('card', 'paypal') and state = 'approved'`, [token]);
    const outcome: TestCard = held ? { ...approved, issuer: held.issuer } : { code: '14', message: 'No authorization to settle', issuer: 'Unknown issuer' };
    return toResult(await this.remember(key, kind, outcome, finalState(outcome), outcome)) as FinalProcessorResult;
  }

  async lookup(idempotencyKey: string): Promise<ProcessorResult | null> {
    const [row] = await this.sql<Row>(`select * from sandbox_authorization where idempotency_key = ? and kind <> 'refund'`, [idempotencyKey]);
    return row ? toResult(row) : null;
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
    const [row] = await this.sql<Row>(`select * from sandbox_authorization where idempotency_key = ? and kind = 'refund'`, [idempotencyKey]);
    return row ? toRefundResult(row) : null;
  }

  /** Records a call under its key; a second call with the key gets the first call's record. */
  private async remember(
    key: string,
    kind: Row['kind'],
    card: TestCard,
    state: SandboxAuthorizationState,
    result: { code: string; message: string } | null,
  ): Promise<Row> {
    const token = `sbx_${kind}_${randomBytes(16).toString('hex')}`;
    const inserted = await this.sql<Row>(
      `insert into sandbox_authorization (token, kind, outcome_code, outcome_message, issuer, state, idempotency_key, result_code, result_message, refund_decline)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (idempotency_key) do nothing returning *`,
      [token, kind, card.code, card.message, card.issuer, state, key, result?.code ?? null, result?.message ?? null, card.refundDecline ?? null],
    );
    if (inserted[0]) return inserted[0];
    const [existing] = await this.sql<Row>(`select * from sandbox_authorization where idempotency_key = ?`, [key]);
    if (!existing || existing.kind !== kind) throw new Error('sandbox: idempotency key reused for another kind of call');
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
    const [updated] = await this.sql<Row>(
      `update sandbox_authorization
          set state = case when ? and outcome_code = '00' then 'approved' else 'declined' end,
              result_code = case when ? then outcome_code else ? end,
              result_message = case when ? then outcome_message else ? end
        where token = ? and idempotency_key = ? and kind = ? and state = 'pending'
        returning *`,
      [passed, passed, failure.code, passed, failure.message, token, key, kind],
    );
    if (updated) return toResult(updated) as FinalProcessorResult;
    const [row] = await this.sql<Row>(`select * from sandbox_authorization where token = ? and idempotency_key = ? and kind = ?`, [token, key, kind]);
    if (!row) throw new Error(`sandbox: no ${kind} authorization for this token and key`);
    return toResult(row) as FinalProcessorResult;
  }

  private sql<T>(query: string, params: unknown[]): Promise<T[]> {
    return this.orm.em.getConnection().execute(query, params, 'all');
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
    : { kind: 'failed', reference: row.token, reason: row.result_message ?? row.outcome_message };
}
