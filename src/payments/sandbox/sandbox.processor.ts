import type { EntityManager } from '@mikro-orm/postgresql';
import { randomBytes } from 'node:crypto';
import type { CardAuthorizationRequest, PaymentProcessor, ProcessorResult } from '../processor';
import { SandboxAuthorization } from './sandbox-authorization.entity';

/** The one-time password that authenticates in the sandbox (contract section 5). */
export const SANDBOX_OTP = '123456';

interface TestCard {
  code: string;
  message: string;
  issuer: string;
}

/**
 * Test cards (contract section 5, plus the usual extra outcomes of acquirer sandboxes).
 * Any other Luhn-valid number is declined as a real acquirer's test environment does.
 */
export const SANDBOX_CARDS: Readonly<Record<string, TestCard>> = {
  '5123450000000008': { code: '00', message: 'Approved', issuer: 'Sandbox Bank Mastercard' },
  '4111111111111111': { code: '00', message: 'Approved', issuer: 'Sandbox Bank Visa' },
  '5060990580000217499': { code: '00', message: 'Approved', issuer: 'Sandbox Bank Verve' },
  '4000000000000002': { code: '51', message: 'Insufficient funds', issuer: 'Sandbox Bank Visa' },
  '4000000000000069': { code: '54', message: 'Expired card', issuer: 'Sandbox Bank Visa' },
  '4000000000000119': { code: '96', message: 'System malfunction', issuer: 'Sandbox Bank Visa' },
};

const UNKNOWN_CARD: TestCard = { code: '14', message: 'Invalid card number', issuer: 'Unknown issuer' };

export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox';

  async authorizeCard(request: CardAuthorizationRequest, tx: EntityManager): Promise<ProcessorResult> {
    const card = SANDBOX_CARDS[request.cardNumber] ?? UNKNOWN_CARD;
    if (card === UNKNOWN_CARD) return { kind: 'declined', token: null, issuer: card.issuer, code: card.code, message: card.message };
    const token = await this.remember(tx, 'card', card);
    if (request.threeDSecure) return { kind: 'challenge', token, issuer: card.issuer };
    return this.finish(token, card);
  }

  async completeChallenge(token: string, otp: string, tx: EntityManager): Promise<Exclude<ProcessorResult, { kind: 'challenge' }>> {
    const auth = await this.take(tx, token);
    if (otp !== SANDBOX_OTP) return { kind: 'declined', token, issuer: auth.issuer, code: 'Z1', message: 'Authentication failed' };
    return this.finish(token, { code: auth.outcomeCode, message: auth.outcomeMessage, issuer: auth.issuer });
  }

  async startPaypal(_request: unknown, tx: EntityManager): Promise<{ token: string }> {
    return { token: await this.remember(tx, 'paypal', { code: '00', message: 'Approved', issuer: 'PayPal' }) };
  }

  async completePaypal(token: string, approved: boolean, tx: EntityManager): Promise<Exclude<ProcessorResult, { kind: 'challenge' }>> {
    const auth = await this.take(tx, token);
    if (!approved) return { kind: 'declined', token, issuer: auth.issuer, code: '17', message: 'Customer cancelled' };
    return { kind: 'approved', token, issuer: auth.issuer, code: '00', message: 'Approved' };
  }

  async chargeToken(token: string, _amount: string, _currency: string, _reference: string, tx: EntityManager): Promise<Exclude<ProcessorResult, { kind: 'challenge' }>> {
    const auth = await tx.findOne(SandboxAuthorization, { token });
    if (!auth) return { kind: 'declined', token, issuer: 'Unknown issuer', code: '14', message: 'Invalid card number' };
    return this.finish(token, { code: auth.outcomeCode, message: auth.outcomeMessage, issuer: auth.issuer });
  }

  private finish(token: string, card: TestCard): Exclude<ProcessorResult, { kind: 'challenge' }> {
    return card.code === '00'
      ? { kind: 'approved', token, issuer: card.issuer, code: '00', message: card.message }
      : { kind: 'declined', token, issuer: card.issuer, code: card.code, message: card.message };
  }

  private async remember(tx: EntityManager, kind: 'card' | 'paypal', card: TestCard): Promise<string> {
    const token = `sbx_${kind}_${randomBytes(16).toString('hex')}`;
    tx.create(SandboxAuthorization, { token, kind, outcomeCode: card.code, outcomeMessage: card.message, issuer: card.issuer });
    await tx.flush();
    return token;
  }

  private async take(tx: EntityManager, token: string): Promise<SandboxAuthorization> {
    const auth = await tx.findOneOrFail(SandboxAuthorization, { token });
    auth.state = 'completed';
    return auth;
  }
}
