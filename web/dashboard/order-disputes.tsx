import { Due, STATUS_LABELS, TONES, type Dispute } from './disputes';
import { displayStatus, Link, money, when } from './ui';

/** The order fields this section shows (spread into the order page's query). */
export const DISPUTE_FIELDS = 'disputes { id orderReference amount currency reason status evidenceDueBy createdAt }';

/**
 * An order's disputes, oldest first: amount, reason, status and the deadline for evidence. They
 * are answered on the Disputes page, which the section links to while one needs a response.
 */
export function DisputesSection(props: { order: { disputes: Dispute[] } }) {
  const disputes = props.order.disputes;
  return (
    <section class="panel" aria-labelledby="disputes-heading">
      <h2 id="disputes-heading">Disputes</h2>
      {disputes.length === 0 ? (
        <p>No disputes.</p>
      ) : (
        <>
          {disputes.some((d) => d.status === 'NEEDS_RESPONSE') && (
            <p>
              The cardholder's bank disputes this payment: no refund is possible until it is decided.{' '}
              <Link href="/dashboard/disputes?status=NEEDS_RESPONSE">Answer it on the Disputes page</Link>.
            </p>
          )}
          <div class="table-wrap">
            <table class="compact disputes">
              <caption class="sr-only">Disputes of this order, oldest first</caption>
              <thead>
                <tr>
                  <th scope="col">Amount</th>
                  <th scope="col">Reason</th>
                  <th scope="col">Status</th>
                  <th scope="col">Evidence due by</th>
                  <th scope="col">Opened</th>
                </tr>
              </thead>
              <tbody>
                {disputes.map((d) => (
                  <tr class="dispute" data-dispute-id={d.id}>
                    <td class="num">{money(d.amount, d.currency)}</td>
                    <td>{displayStatus(d.reason)}</td>
                    <td>
                      <span class={`status status-${TONES[d.status] ?? 'wait'}`}>{STATUS_LABELS[d.status] ?? d.status}</span>
                    </td>
                    <td>
                      <Due dispute={d} />
                    </td>
                    <td>{when(d.createdAt)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
