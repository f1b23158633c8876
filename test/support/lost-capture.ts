import type { TestService } from './service';
import { SandboxProcessor } from '../../src/payments/sandbox/sandbox.processor';

/** The quote of a 500.00 capture at the sandbox merchant's card rate (1.5 %, borne by the customer). */
const QUOTE = { fee: '7.50', feeRate: '0.015', subsidiaryFee: '0.00', customerFee: '7.50', totalChargedAmount: '507.50' };

/**
 * Leaves an Authorized order as a process that stopped between a capture's call and its answer
 * leaves it: the capture of 500.00 recorded (with the caller's key, when given, and its age) and
 * taken by the sandbox processor under the action's idempotency key (`capture:<order id>:lost`), no
 * answer written.
 */
export async function captureWithLostAnswer(
  t: TestService,
  order: { id: number; processorToken: string; environmentId?: number },
  recorded: { merchantKey?: string; secondsAgo?: number } = {},
): Promise<void> {
  const columns = ['order_id', 'kind', 'actor', 'amount', 'quote', 'idempotency_key'];
  const values = ['?', "'capture'", "'capture'", '500', '?::jsonb', '?'];
  const params: unknown[] = [order.id, JSON.stringify(QUOTE), `capture:${order.id}:lost`];
  if (recorded.merchantKey !== undefined) {
    // A keyed request records what it asked for, to compare a retry's amount with.
    columns.push('environment_id', 'merchant_key', 'requested_amount');
    values.push('?', '?', '500');
    params.push(order.environmentId, recorded.merchantKey);
  }
  if (recorded.secondsAgo !== undefined) {
    columns.push('created_at');
    values.push(`now() - make_interval(secs => ?)`);
    params.push(recorded.secondsAgo);
  }
  await t.service.runtime.ctx.orm.em.getConnection().execute(`insert into authorization_action (${columns.join(', ')}) values (${values.join(', ')})`, params);
  await new SandboxProcessor(t.service.runtime.ctx.orm).capture({
    token: order.processorToken,
    amount: QUOTE.totalChargedAmount,
    currency: 'NGN',
    idempotencyKey: `capture:${order.id}:lost`,
  });
}
