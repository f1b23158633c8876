import { useEffect, useRef, useState } from 'preact/hooks';
import { gql, may, subscribe } from './api';
import { ALL_STATUS_CHANGES, OrderTable } from './overview';
import { endOfDay, FilterForm, InputField, SelectField, startOfDay, usePages } from './filters';
import { ErrorNote, followUp, Link, messageOf, money, ORDER_STATUSES, Status, useData, useLocation, when, Pager } from './ui';
import { REFUND_FIELDS, RefundsSection } from './order-refunds';
import { CAPTURE_FIELDS, CaptureSection } from './order-capture';
import { DISPUTE_FIELDS, DisputesSection } from './order-disputes';

const PAGE_SIZE = 20;

const ORDERS = `query Orders($filter: OrderFilterInput, $first: Int, $after: String) {
  orders(filter: $filter, first: $first, after: $after) {
    edges { cursor node { orderReference status statusId amount currencyName paymentMethod dateCreated customer { emailAddress } } }
    pageInfo { hasNextPage endCursor }
    totalCount
    totalCountIsEstimate
  }
}`;

/** The API's own status words (the webhooks carry the same). */
const STATUSES: [string, string][] = [['', 'Any status'], ...ORDER_STATUSES.map(([id, name]): [string, string] => [String(id), name])];
const METHODS: [string, string][] = [
  ['', 'Any method'],
  ['Card Payment', 'Card'],
  ['PayPal', 'PayPal'],
];

/** The filter as the URL holds it (so a filtered list can be linked to and survives a reload). */
function filterOf(query: URLSearchParams): Record<string, unknown> {
  const filter: Record<string, unknown> = {};
  const status = query.get('status');
  if (status) filter.statusIds = [Number(status)];
  const method = query.get('method');
  if (method) filter.paymentMethod = method;
  const from = query.get('from');
  if (from) filter.createdFrom = startOfDay(from);
  const to = query.get('to');
  if (to) filter.createdTo = endOfDay(to);
  const email = query.get('email');
  if (email) filter.search = email;
  const link = query.get('link');
  if (link) filter.paymentLinkId = Number(link);
  return filter;
}

/** Orders with filters and keyset pagination (the cursor of the last row, never an offset); statuses update live. */
export function Orders() {
  const { query } = useLocation();
  const key = query.toString();
  const { cursors, setCursors, after } = usePages(key);
  const list = useData(() => gql(ORDERS, { filter: filterOf(query), first: PAGE_SIZE, after }), [key, after]);
  const [live, setLive] = useState<Record<string, { status: string; statusId: number }>>({});
  const firstPage = useRef(true);
  firstPage.current = cursors.length === 1;

  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = subscribe(ALL_STATUS_CHANGES, {}, (data: any) => {
      const change = data.orderStatusChanged;
      setLive((l) => ({ ...l, [change.reference]: { status: change.status, statusId: change.statusId } }));
      // On the first page a changed order may be one the list does not show yet (or no longer matches the filter).
      if (firstPage.current) {
        clearTimeout(timer);
        timer = setTimeout(list.reload, 300);
      }
    });
    return () => {
      clearTimeout(timer);
      stop();
    };
  }, []);

  // Fresh rows from the server supersede what the subscription said before they were fetched.
  useEffect(() => setLive({}), [list.data]);
  const orders = (list.data?.orders.edges ?? []).map((e: any) => ({ ...e.node, ...(live[e.node.orderReference] ?? {}) }));

  return (
    <>
      <h1>Orders</h1>
      <FilterForm label="Filter orders" path="/dashboard/orders" query={query} keep={['link']} clear>
        <SelectField id="f-status" name="status" label="Status" options={STATUSES} value={query.get('status') ?? ''} />
        <SelectField id="f-method" name="method" label="Payment method" options={METHODS} value={query.get('method') ?? ''} />
        <InputField id="f-from" name="from" label="Created from" type="date" value={query.get('from') ?? ''} />
        <InputField id="f-to" name="to" label="Created to" type="date" value={query.get('to') ?? ''} />
        <InputField id="f-email" name="email" label="Customer email" type="email" value={query.get('email') ?? ''} />
      </FilterForm>
      {query.get('link') && <LinkShown id={Number(query.get('link'))} />}
      <ErrorNote error={list.error} />
      {list.data && (
        <>
          <p aria-live="polite">
            {list.data.orders.totalCountIsEstimate ? 'About ' : ''}
            {list.data.orders.totalCount} order{list.data.orders.totalCount === 1 ? '' : 's'}
          </p>
          <OrderTable orders={orders} />
          <Pager cursors={cursors} setCursors={setCursors} pageInfo={list.data.orders.pageInfo} />
        </>
      )}
    </>
  );
}

/** The payment link whose orders the list shows, by its name. */
function LinkShown(props: { id: number }) {
  const link = useData(() => gql(`query LinkName($id: Int) { paymentLink(id: $id) { id name } }`, { id: props.id }), [props.id]);
  if (link.error) return <ErrorNote error={link.error} />;
  return <p>{link.data ? <>Showing the orders of the payment link “{link.data.paymentLink.name}”.</> : 'Showing the orders of one payment link.'}</p>;
}

const ORDER = `query Order($reference: String!) {
  order(reference: $reference) {
    orderReference paymentReference productName amount totalAmountCharged statusId status paymentMethod
    paymentResponseCode paymentResponseMessage narration currencyName fee customerFee subsidiaryFee
    paymentLinkId paymentLink { id name } recurringPaymentReference dateCreated dateUpdated datePaymentConfirmed
    customer { firstName lastName emailAddress mobileNumber countryShortName }
    orderPayments { orderPaymentReference paymentOption status responseCode responseMessage dateCreated }
    cardDetails { cardType cardFirstSixDigits cardLastFourDigits cardExpiryMonth cardExpiryYear cardIssuer }
    ${CAPTURE_FIELDS} ${REFUND_FIELDS} ${DISPUTE_FIELDS}
  }
  orderTimeline(reference: $reference) { id event description source createdAt }
}`;

export const DELIVERIES = `query Deliveries($orderReference: String, $limit: Int) {
  webhookDeliveries(orderReference: $orderReference, limit: $limit) {
    id eventId notify notifyType orderReference url state attemptCount nextAttemptAt deliveredAt createdAt
    attempts { id statusCode latencyMs error createdAt }
  }
}`;

const ORDER_CHANGES = `subscription OrderChanges($reference: String) { orderStatusChanged(reference: $reference) { reference statusId status } }`;

/** One order: details, timeline, webhook deliveries of its events; its status follows the subscription. */
export function OrderPage(props: { reference: string }) {
  const order = useData(() => gql(ORDER, { reference: props.reference }), [props.reference]);
  // Webhook deliveries are a developers' tool: a role without it gets no section (and no request refused).
  const showDeliveries = may('developers');
  const deliveries = useData(
    () => (showDeliveries ? gql(DELIVERIES, { orderReference: props.reference, limit: 50 }) : Promise.resolve(null)),
    [props.reference],
  );
  const [live, setLive] = useState<{ status: string; statusId: number } | null>(null);

  useEffect(
    () =>
      subscribe(ORDER_CHANGES, { reference: props.reference }, (data: any) => {
        setLive({ status: data.orderStatusChanged.status, statusId: data.orderStatusChanged.statusId });
        order.reload();
        // The webhook of a settled order is written with the change and sent soon after: follow it.
        followUp(deliveries.reload);
      }),
    [props.reference],
  );

  if (order.error) return <ErrorNote error={order.error} />;
  if (!order.data) return <p>Loading…</p>;
  const o = order.data.order;
  const status = live ?? { status: o.status, statusId: o.statusId };
  return (
    <>
      <p>
        <Link href="/dashboard/orders">← Orders</Link>
      </p>
      <h1>
        Order <span class="mono">{o.orderReference}</span>
      </h1>
      <p class="order-status" aria-live="polite">
        Status: <Status status={status.status} statusId={status.statusId} />
      </p>
      <section class="panel" aria-labelledby="details-heading">
        <h2 id="details-heading">Details</h2>
        <dl class="details">
          <dt>Amount</dt>
          <dd>{money(o.amount, o.currencyName)}</dd>
          {o.amountAuthorized !== null && (
            <>
              <dt>Amount authorized</dt>
              <dd>{money(o.amountAuthorized, o.currencyName)}</dd>
            </>
          )}
          <dt>Total charged</dt>
          <dd>{money(o.totalAmountCharged, o.currencyName)}</dd>
          <dt>Fee</dt>
          <dd>{money(o.fee, o.currencyName)}</dd>
          <dt>Description</dt>
          <dd>{o.productName || '—'}</dd>
          <dt>Payment method</dt>
          <dd>{o.paymentMethod || '—'}</dd>
          <dt>Response</dt>
          <dd>{o.paymentResponseCode ? `${o.paymentResponseCode} ${o.paymentResponseMessage}` : '—'}</dd>
          <dt>Customer</dt>
          <dd>
            {[o.customer.firstName, o.customer.lastName].filter(Boolean).join(' ') || '—'} {o.customer.emailAddress && `<${o.customer.emailAddress}>`}
          </dd>
          <dt>Payment link</dt>
          <dd>{o.paymentLink ? <Link href={`/dashboard/links/${o.paymentLink.id}`}>{o.paymentLink.name}</Link> : '—'}</dd>
          <dt>Created</dt>
          <dd>{when(o.dateCreated)}</dd>
          <dt>Confirmed</dt>
          <dd>{when(o.datePaymentConfirmed)}</dd>
          {o.cardDetails.map((c: any) => (
            <>
              <dt>Card</dt>
              <dd>
                {c.cardType} {c.cardFirstSixDigits}…{c.cardLastFourDigits}, expires {c.cardExpiryMonth}/{c.cardExpiryYear}
              </dd>
            </>
          ))}
        </dl>
      </section>
      <CaptureSection reference={o.orderReference} order={o} statusId={status.statusId} reload={order.reload} />
      <RefundsSection reference={o.orderReference} order={o} reload={order.reload} />
      <DisputesSection order={o} />
      <section class="panel" aria-labelledby="timeline-heading">
        <h2 id="timeline-heading">Timeline</h2>
        <ol class="timeline">
          {order.data.orderTimeline.map((t: any) => (
            <li>
              <time dateTime={t.createdAt}>{when(t.createdAt)}</time> <strong>{t.event}</strong> {t.description && <span>{t.description}</span>}{' '}
              <span class="muted">({t.source})</span>
            </li>
          ))}
        </ol>
      </section>
      {showDeliveries && (
        <section class="panel" aria-labelledby="webhooks-heading">
          <h2 id="webhooks-heading">Webhook deliveries</h2>
          <ErrorNote error={deliveries.error} />
          {deliveries.data && <DeliveryLog deliveries={deliveries.data.webhookDeliveries} onChange={deliveries.reload} />}
        </section>
      )}
    </>
  );
}

/** Deliveries with every attempt's response code; redeliver a delivery. */
export function DeliveryLog(props: { deliveries: any[]; onChange: () => void }) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState<string | null>(null);
  if (props.deliveries.length === 0) return <p>No webhook deliveries.</p>;
  return (
    <>
      <ErrorNote error={error} />
      <ul class="deliveries">
        {props.deliveries.map((d) => (
          <li class="delivery" data-event-id={d.eventId}>
            <div class="delivery-head">
              <span>
                <strong>{d.notifyType}</strong> {d.orderReference && <span class="mono">{d.orderReference}</span>} · {d.state} · {d.attemptCount} attempt
                {d.attemptCount === 1 ? '' : 's'}
              </span>
              <button
                type="button"
                class="secondary"
                disabled={busy === d.eventId}
                aria-label={`Redeliver event ${d.eventId}`}
                onClick={async () => {
                  setBusy(d.eventId);
                  setError(undefined);
                  try {
                    await gql(`mutation Redeliver($eventId: String!) { redeliverWebhook(eventId: $eventId) { id } }`, { eventId: d.eventId });
                    followUp(props.onChange);
                  } catch (err) {
                    setError(messageOf(err));
                  } finally {
                    setBusy(null);
                  }
                }}
              >
                Redeliver
              </button>
            </div>
            <div class="muted mono small">
              {d.eventId} → {d.url}
            </div>
            <table class="compact attempts">
              <caption class="sr-only">Attempts of event {d.eventId}</caption>
              <thead>
                <tr>
                  <th scope="col">Attempt</th>
                  <th scope="col">Response</th>
                  <th scope="col">Time</th>
                </tr>
              </thead>
              <tbody>
                {d.attempts.map((a: any, i: number) => (
                  <tr class="attempt">
                    <td>{i + 1}</td>
                    <td>{a.statusCode !== null ? `HTTP ${a.statusCode}` : (a.error ?? 'no response')}</td>
                    <td>
                      {when(a.createdAt)} ({a.latencyMs} ms)
                    </td>
                  </tr>
                ))}
                {d.attempts.length === 0 && (
                  <tr>
                    <td colSpan={3}>Not attempted yet{d.nextAttemptAt ? `; next at ${when(d.nextAttemptAt)}` : ''}.</td>
                  </tr>
                )}
              </tbody>
            </table>
          </li>
        ))}
      </ul>
    </>
  );
}
