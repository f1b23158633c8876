import { useRef, useState } from 'preact/hooks';
import { ApiError } from './api';
import { ErrorNote, messageOf, money } from './ui';

/** What the service answered, in a sentence for the merchant, with a tone: done, refused by the processor, or still on its way. */
export interface ActionOutcome {
  tone: 'ok' | 'bad' | 'wait';
  text: string;
}

/** A refusal of the service, put next to the field it is about (or above the buttons). */
interface Refusal {
  field?: 'amount' | 'reason';
  text: string;
}

/** How a service code is shown: next to which field, and in which words (absent: the service's own sentence). */
export interface RefusalShown {
  field?: Refusal['field'];
  text?: string;
}

export interface MoneyActionProps {
  /** The button that opens the form, e.g. "Refund"; the form is labelled by it too. */
  label: string;
  currency: string;
  /** The amount field, prefilled (e.g. with all that remains); absent for an action without an amount (void). */
  amount?: { label: string; initial: string; hint: string };
  /** An optional free-text reason (refunds). */
  reason?: { label: string; maxLength: number };
  /** The question asked before anything is sent, e.g. "Refund NGN 1,500.00 to the customer?". */
  question: (amount: string | null) => string;
  /** The button that sends it, e.g. "Confirm refund", and its label while on its way. */
  confirm: string;
  sending: string;
  /** Sends it. `key` is made once per opened form: sending it twice does it once. */
  run: (input: { amount: string | null; reason: string | null; key: string }) => Promise<ActionOutcome>;
  /** Service codes shown next to a field or in the merchant's words; other refusals show the service's sentence above the buttons. */
  refusals: Record<string, RefusalShown>;
  /** Called after the service answered (the page reads the order again). */
  done: () => void;
  /** Hands the answer to the caller to show, when this button goes away with the state it changed (capture, void). */
  onOutcome?: (outcome: ActionOutcome) => void;
  /** False when there is nothing left to act on (a refund took the whole balance): the button goes, the last answer stays. */
  available?: boolean;
}

/** An amount as people type it: digits with at most two decimals (the service checks the rest: more than zero, within the balance). */
const AMOUNT = /^\d{1,12}(\.\d{1,2})?$/;

/** A fresh idempotency key (getRandomValues works on plain-HTTP pages too, unlike randomUUID). */
const newKey = () => `dashboard-${Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('')}`;

/**
 * A button that moves money on an order (refund, capture, void): it opens a form (an amount
 * prefilled, editable for part of it; a reason), asks for a confirmation naming the amount in the
 * one money format, then sends the request once. One idempotency key is made when the form opens,
 * so a double click, or a retry after a lost answer, does it once. The service's refusals are shown
 * next to the field they concern; its answer is shown once it arrives.
 */
export function MoneyAction(props: MoneyActionProps) {
  const [step, setStep] = useState<'closed' | 'form' | 'confirm'>('closed');
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [outcome, setOutcome] = useState<ActionOutcome | null>(null);
  const [busy, setBusy] = useState(false);
  const key = useRef('');
  // Set at once on the first click (state reaches the button only at the next render).
  const inFlight = useRef(false);
  const id = props.label.toLowerCase().replace(/[^a-z]+/g, '-');
  // An action with nothing to fill in (void) goes straight to its confirmation.
  const form = Boolean(props.amount || props.reason);

  const open = () => {
    key.current = newKey();
    setAmount(props.amount?.initial ?? '');
    setReason('');
    setRefusal(null);
    setOutcome(null);
    setStep(form ? 'form' : 'confirm');
  };
  const review = () => {
    if (props.amount && !AMOUNT.test(amount.trim())) {
      setRefusal({ field: 'amount', text: 'Enter an amount in figures, such as 1500 or 1500.50.' });
      return;
    }
    setRefusal(null);
    setStep('confirm');
  };
  const send = async () => {
    if (inFlight.current) return;
    inFlight.current = true;
    setBusy(true);
    try {
      const answer = await props.run({ amount: props.amount ? amount.trim() : null, reason: reason.trim() || null, key: key.current });
      if (props.onOutcome) props.onOutcome(answer);
      else setOutcome(answer);
      setStep('closed');
      props.done();
    } catch (err) {
      const shown = err instanceof ApiError && err.code ? props.refusals[err.code] : undefined;
      setRefusal({ field: shown?.field, text: shown?.text ?? messageOf(err) });
      setStep(form ? 'form' : 'confirm');
    } finally {
      inFlight.current = false;
      setBusy(false);
    }
  };
  const fieldRefusal = (field: Refusal['field']) =>
    refusal && refusal.field === field ? (
      <p class="error" role="alert" id={`${id}-${field}-error`}>
        {refusal.text}
      </p>
    ) : null;

  return (
    <div class="money-action">
      {step === 'closed' && props.available !== false && (
        <button type="button" onClick={open}>
          {props.label}
        </button>
      )}
      {outcome && (
        <p class={`outcome outcome-${outcome.tone}`} role="status">
          {outcome.text}
        </p>
      )}
      {step === 'form' && (
        <form
          class="panel"
          aria-label={props.label}
          onSubmit={(e) => {
            e.preventDefault();
            review();
          }}
        >
          {props.amount && (
            <div class="field">
              <label for={`${id}-amount`}>
                {props.amount.label} ({props.currency})
              </label>
              <input
                id={`${id}-amount`}
                inputMode="decimal"
                autocomplete="off"
                value={amount}
                onInput={(e) => setAmount((e.currentTarget as HTMLInputElement).value)}
                aria-invalid={refusal?.field === 'amount'}
                aria-describedby={refusal?.field === 'amount' ? `${id}-amount-error` : `${id}-amount-hint`}
              />
              <p class="muted small" id={`${id}-amount-hint`}>
                {props.amount.hint}
              </p>
              {fieldRefusal('amount')}
            </div>
          )}
          {props.reason && (
            <div class="field">
              <label for={`${id}-reason`}>{props.reason.label} (optional)</label>
              <textarea
                id={`${id}-reason`}
                rows={2}
                maxLength={props.reason.maxLength}
                value={reason}
                onInput={(e) => setReason((e.currentTarget as HTMLTextAreaElement).value)}
                aria-invalid={refusal?.field === 'reason'}
              />
              {fieldRefusal('reason')}
            </div>
          )}
          {refusal && !refusal.field && <ErrorNote error={refusal.text} />}
          <div class="actions">
            <button type="submit">Continue</button>
            <button type="button" class="secondary" onClick={() => setStep('closed')}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {step === 'confirm' && (
        <div class="panel confirm" role="alertdialog" aria-labelledby={`${id}-question`}>
          <p id={`${id}-question`}>{props.question(props.amount ? money(amount.trim(), props.currency) : null)}</p>
          {!form && <ErrorNote error={refusal?.text} />}
          <div class="actions">
            <button type="button" disabled={busy} onClick={() => void send()}>
              {busy ? props.sending : props.confirm}
            </button>
            <button type="button" class="secondary" disabled={busy} onClick={() => setStep(form ? 'form' : 'closed')}>
              {form ? 'Back' : 'Cancel'}
            </button>
          </div>
        </div>
      )}
    </div>
  );
}
