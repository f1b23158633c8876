import { gql, may } from './api';
import { MoneyAction, type ActionOutcome, type RefusalShown } from './money-action';
import { followUp, money, when } from './ui';

/** The order fields this section shows (spread into the order page's query). */
export const REFUND_FIELDS = 'amountRefunded amountRefundable refunds { id amount currency status reason failureReason createdAt }';

const REFUND = `mutation Refund($input: RefundOrderInput!) { refundOrder(input: $input) { id amount currency status failureReason } }`;

interface Refund {
  id: string;
  amount: string;
  currency: string;
  status: 'PENDING' | 'SUCCEEDED' | 'FAILED';
  reason: string | null;
  failureReason: string | null;
  createdAt: string;
}

/** "SUCCEEDED" → "Succeeded": the API's word, written as a label. */
const statusWord = (status: string) => status.charAt(0) + status.slice(1).toLowerCase();

/** A decimal string above zero (the service answers exact decimals such as "0.00"). */
const positive = (amount: string) => /[1-9]/.test(amount);

/** What a refund's answer means for the merchant. */
function outcomeOf(refund: Refund): ActionOutcome {
  const amount = money(refund.amount, refund.currency);
  if (refund.status === 'SUCCEEDED') return { tone: 'ok', text: `Refunded ${amount} to the customer.` };
  if (refund.status === 'FAILED') return { tone: 'bad', text: `The refund of ${amount} failed: ${refund.failureReason ?? 'no reason given'}.` };
  return { tone: 'wait', text: `The refund of ${amount} is with the processor; its result will show in the list below.` };
}

/** The service's refusals in the merchant's words; the amount's (zero, too many decimals, above the balance) in the service's own sentence, next to the amount. */
const REFUSALS: Record<string, RefusalShown> = {
  REFUND_AMOUNT_INVALID: { field: 'amount' },
  IDEMPOTENCY_KEY_REUSED: { text: 'This form already sent a refund of another amount. Cancel it and start a new refund.' },
  NOT_AVAILABLE_IN_LIVE_MODE: { text: 'Refunds of live payments are not available yet.' },
  FORBIDDEN: { text: 'Your role may not refund payments.' },
};

/**
 * An order's refunds (amount, status, reason, why one failed, when), how much was refunded and
 * the balance still refundable; for a member who may move money, "Refund" while something is left.
 */
export function RefundsSection(props: { reference: string; order: any; reload: () => void }) {
  const o = props.order;
  const refunds: Refund[] = o.refunds;
  return (
    <section class="panel" aria-labelledby="refunds-heading">
      <h2 id="refunds-heading">Refunds</h2>
      <dl class="totals">
        <dt>Refunded</dt>
        <dd data-field="amount-refunded">{money(o.amountRefunded, o.currencyName)}</dd>
        <dt>Balance</dt>
        <dd data-field="amount-refundable">{money(o.amountRefundable, o.currencyName)}</dd>
      </dl>
      {may('payments.write') && (
        <MoneyAction
          label="Refund"
          // A refund of the whole balance leaves nothing to refund: the button goes, its answer stays on screen.
          available={positive(o.amountRefundable)}
          currency={o.currencyName}
          amount={{ label: 'Amount to refund', initial: o.amountRefundable, hint: `At most the balance, ${money(o.amountRefundable, o.currencyName)}.` }}
          reason={{ label: 'Reason', maxLength: 500 }}
          question={(amount) => `Refund ${amount} to the customer?`}
          confirm="Confirm refund"
          sending="Refunding…"
          run={async ({ amount, reason, key }) => {
            const answer = await gql<{ refundOrder: Refund }>(REFUND, { input: { reference: props.reference, amount, reason, idempotencyKey: key } });
            // A refund left with the processor settles within seconds: read the order again meanwhile.
            if (answer.refundOrder.status === 'PENDING') followUp(props.reload);
            return outcomeOf(answer.refundOrder);
          }}
          refusals={REFUSALS}
          done={props.reload}
        />
      )}
      {refunds.length === 0 ? (
        <p>No refunds.</p>
      ) : (
        <div class="table-wrap">
          <table class="compact refunds">
            <caption class="sr-only">Refunds of this order, oldest first</caption>
            <thead>
              <tr>
                <th scope="col">Amount</th>
                <th scope="col">Status</th>
                <th scope="col">Reason</th>
                <th scope="col">Failure reason</th>
                <th scope="col">Date</th>
              </tr>
            </thead>
            <tbody>
              {refunds.map((r) => (
                <tr class="refund" data-refund-id={r.id}>
                  <td class="num">{money(r.amount, r.currency)}</td>
                  <td>
                    <span class={`status status-${r.status === 'SUCCEEDED' ? 'ok' : r.status === 'FAILED' ? 'bad' : 'wait'}`}>{statusWord(r.status)}</span>
                  </td>
                  <td>{r.reason ?? '—'}</td>
                  <td>{r.failureReason ?? '—'}</td>
                  <td>{when(r.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
