import { useState } from 'preact/hooks';
import { gql, may } from './api';
import { FilterForm, SelectField, usePages } from './filters';
import { displayStatus, ErrorNote, Link, messageOf, money, Pager, useData, useLocation, when } from './ui';

const PAGE_SIZE = 20;

const DISPUTES = `query Disputes($first: Int, $after: String, $status: DisputeStatus) {
  disputes(first: $first, after: $after, status: $status) {
    edges { node { id orderReference amount currency reason status evidenceDueBy createdAt } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const SUBMIT_EVIDENCE = `mutation ($input: SubmitDisputeEvidenceInput!) { submitDisputeEvidence(input: $input) { id status } }`;
const ACCEPT = `mutation ($id: ID!) { acceptDispute(id: $id) { id status } }`;

/** The API's status words, as a label shows them. */
const STATUSES: [string, string][] = [
  ['', 'Any status'],
  ['NEEDS_RESPONSE', 'Needs response'],
  ['UNDER_REVIEW', 'Under review'],
  ['WON', 'Won'],
  ['LOST', 'Lost'],
  ['ACCEPTED', 'Accepted'],
];
export const STATUS_LABELS: Record<string, string> = Object.fromEntries(STATUSES);
export const TONES: Record<string, string> = { WON: 'ok', LOST: 'bad', ACCEPTED: 'bad' };
/** The service's limit on evidence text. */
const MAX_EVIDENCE = 10_000;
/** A deadline this close is highlighted. */
const SOON_MS = 2 * 86_400_000;

export interface Dispute {
  id: string;
  orderReference: string;
  amount: string;
  currency: string;
  reason: string;
  status: string;
  evidenceDueBy: string;
  createdAt: string;
}

/** The deadline of a dispute that still needs an answer, marked when it is past or within two days. */
export function Due(props: { dispute: Dispute }) {
  const d = props.dispute;
  if (d.status !== 'NEEDS_RESPONSE') return <>{when(d.evidenceDueBy)}</>;
  const left = Date.parse(d.evidenceDueBy) - Date.now();
  return (
    <>
      {when(d.evidenceDueBy)}{' '}
      {left <= 0 ? <span class="status status-bad">Overdue</span> : left <= SOON_MS ? <span class="status status-wait">Due soon</span> : null}
    </>
  );
}

/** The answer to a dispute that needs one: evidence, or accepting it after a confirmation. */
function Answer(props: { dispute: Dispute; onAnswered: (message: string) => void }) {
  const d = props.dispute;
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const act = async (work: () => Promise<unknown>, message: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await work();
      setConfirming(false);
      props.onAnswered(message);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <form
        class="dispute-answer"
        aria-label={`Answer the dispute of ${d.orderReference}`}
        onSubmit={(e) => {
          e.preventDefault();
          const text = String(new FormData(e.currentTarget as HTMLFormElement).get('evidence') ?? '').trim();
          if (!text) return setError('Describe the evidence first.');
          void act(() => gql(SUBMIT_EVIDENCE, { input: { id: d.id, text } }), `Evidence submitted for ${d.orderReference}: the processor decides.`);
        }}
      >
        <label for={`evidence-${d.id}`}>Evidence</label>
        <textarea id={`evidence-${d.id}`} name="evidence" rows={3} maxLength={MAX_EVIDENCE} required />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Submit evidence
          </button>
          <button type="button" class="secondary" disabled={busy || confirming} onClick={() => setConfirming(true)}>
            Accept dispute
          </button>
        </div>
      </form>
      {confirming && (
        <div class="panel confirm" role="alertdialog" aria-labelledby={`accept-${d.id}`}>
          <p id={`accept-${d.id}`}>
            Accept the dispute of {d.orderReference}? {money(d.amount, d.currency)} goes back to the cardholder's bank; this cannot be undone.
          </p>
          <div class="actions">
            <button type="button" disabled={busy} onClick={() => void act(() => gql(ACCEPT, { id: d.id }), `Dispute of ${d.orderReference} accepted.`)}>
              Yes, accept
            </button>
            <button type="button" class="secondary" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      )}
      <ErrorNote error={error} />
    </>
  );
}

/** The environment's disputes, newest first, filtered by status; those needing a response can be answered by members allowed to. */
export function Disputes() {
  const { query } = useLocation();
  const key = query.toString();
  const status = query.get('status') || null;
  const { cursors, setCursors, after } = usePages(key);
  const [notice, setNotice] = useState<string>();
  const list = useData(() => gql(DISPUTES, { first: PAGE_SIZE, after, status }), [key, after]);
  const disputes: Dispute[] = (list.data?.disputes.edges ?? []).map((e: { node: Dispute }) => e.node);
  const answering = may('payments.write');

  return (
    <>
      <h1>Disputes</h1>
      <p class="muted">Chargebacks the cardholders' banks opened. Answer each before its deadline, with evidence or by accepting it.</p>
      <FilterForm label="Filter disputes" path="/dashboard/disputes" query={query}>
        <SelectField id="d-status" name="status" label="Status" options={STATUSES} value={status ?? ''} />
      </FilterForm>
      {notice && <p role="status">{notice}</p>}
      <ErrorNote error={list.error} />
      {list.data && (
        <>
          {disputes.length === 0 ? (
            <p>No disputes.</p>
          ) : (
            <table class="disputes">
              <caption class="sr-only">Disputes, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Opened</th>
                  <th scope="col">Order</th>
                  <th scope="col">Amount</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Status</th>
                  <th scope="col">Evidence due</th>
                  {answering && <th scope="col">Answer</th>}
                </tr>
              </thead>
              <tbody>
                {disputes.map((d) => (
                  <tr class="dispute" data-dispute-id={d.id} data-status={d.status}>
                    <td>{when(d.createdAt)}</td>
                    <td>
                      <Link href={`/dashboard/orders/${encodeURIComponent(d.orderReference)}`}>{d.orderReference}</Link>
                    </td>
                    <td>{money(d.amount, d.currency)}</td>
                    <td>{displayStatus(d.reason)}</td>
                    <td>
                      <span class={`status status-${TONES[d.status] ?? 'wait'}`}>{STATUS_LABELS[d.status] ?? d.status}</span>
                    </td>
                    <td>
                      <Due dispute={d} />
                    </td>
                    {answering && (
                      <td>
                        {d.status === 'NEEDS_RESPONSE' ? (
                          <Answer
                            dispute={d}
                            onAnswered={(message) => {
                              setNotice(message);
                              list.reload();
                            }}
                          />
                        ) : (
                          <span class="muted">—</span>
                        )}
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <Pager cursors={cursors} setCursors={setCursors} pageInfo={list.data.disputes.pageInfo} />
        </>
      )}
    </>
  );
}
