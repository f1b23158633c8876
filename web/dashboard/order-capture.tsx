import { useState } from 'preact/hooks';
import { OrderStatus } from '../../src/orders/order-status';
import { gql, may } from './api';
import { MoneyAction, type ActionOutcome, type RefusalShown } from './money-action';
import { money } from './ui';

/** The order fields this section shows (spread into the order page's query). */
export const CAPTURE_FIELDS = 'captureMethod amountAuthorized';

const CAPTURE = `mutation Capture($input: CaptureOrderInput!) { captureOrder(input: $input) { statusId amount currencyName } }`;
const VOID = `mutation Void($input: VoidOrderInput!) { voidOrder(input: $input) { statusId amount currencyName } }`;

interface Answer {
  statusId: number;
  amount: string;
  currencyName: string;
}

/** The service's refusals in the merchant's words; the amount's in the service's own sentence, next to the amount. */
const CAPTURE_REFUSALS: Record<string, RefusalShown> = {
  CAPTURE_AMOUNT_INVALID: { field: 'amount' },
  NOT_AVAILABLE_IN_LIVE_MODE: { text: 'Capturing live payments is not available yet.' },
  FORBIDDEN: { text: 'Your role may not capture payments.' },
};
const VOID_REFUSALS: Record<string, RefusalShown> = {
  NOT_AVAILABLE_IN_LIVE_MODE: { text: 'Voiding live payments is not available yet.' },
  FORBIDDEN: { text: 'Your role may not void payments.' },
};

/**
 * An Authorized order's held money: how much, and for a member who may move money "Capture"
 * (all of it by default, or part; once) and "Void" (release the hold), each after a confirmation.
 * Each opened form sends its own idempotency key, as the refund form does: a double submission
 * captures or voids once and both answers agree.
 * The answer stays shown after the order has moved on (Successful or Voided).
 */
export function CaptureSection(props: { reference: string; order: any; statusId: number; reload: () => void }) {
  const o = props.order;
  const [outcome, setOutcome] = useState<ActionOutcome | null>(null);
  const authorized = props.statusId === OrderStatus.Authorized;
  if (!authorized && !outcome) return null;
  const held = o.amountAuthorized ?? o.amount;
  const heldWords = money(held, o.currencyName);
  const run = async (document: string, input: Record<string, unknown>, done: (a: Answer) => ActionOutcome) => {
    const answer = await gql<Record<string, Answer>>(document, { input });
    return done(Object.values(answer)[0]!);
  };
  return (
    <section class="panel" aria-labelledby="capture-heading">
      <h2 id="capture-heading">Held payment</h2>
      {outcome && (
        <p class={`outcome outcome-${outcome.tone}`} role="status">
          {outcome.text}
        </p>
      )}
      {authorized && (
        <>
          <p>
            <strong data-field="amount-held">{heldWords}</strong> is held on the customer's card, not taken. Capture takes all or part of it, once; Void
            releases it.
          </p>
          {may('payments.write') && (
            <div class="actions">
              <MoneyAction
                label="Capture"
                currency={o.currencyName}
                amount={{ label: 'Amount to capture', initial: held, hint: `At most the amount held, ${heldWords}. The rest is released.` }}
                question={(amount) => `Capture ${amount} from the customer's card?`}
                confirm="Confirm capture"
                sending="Capturing…"
                run={({ amount, key }) =>
                  run(CAPTURE, { reference: props.reference, amount, idempotencyKey: key }, (a) =>
                    a.statusId === OrderStatus.Successful
                      ? { tone: 'ok', text: `Captured ${money(a.amount, a.currencyName)}.` }
                      : { tone: 'wait', text: 'The capture is with the processor; the status changes when it answers.' },
                  )
                }
                refusals={CAPTURE_REFUSALS}
                done={props.reload}
                onOutcome={setOutcome}
              />
              <MoneyAction
                label="Void"
                currency={o.currencyName}
                question={() => `Void this payment and release the ${heldWords} held on the customer's card?`}
                confirm="Confirm void"
                sending="Voiding…"
                run={({ key }) =>
                  run(VOID, { reference: props.reference, idempotencyKey: key }, (a) =>
                    a.statusId === OrderStatus.Voided
                      ? { tone: 'ok', text: `Voided: the ${heldWords} held on the customer's card is released.` }
                      : { tone: 'wait', text: 'The void is with the processor; the status changes when it answers.' },
                  )
                }
                refusals={VOID_REFUSALS}
                done={props.reload}
                onOutcome={setOutcome}
              />
            </div>
          )}
        </>
      )}
    </section>
  );
}
