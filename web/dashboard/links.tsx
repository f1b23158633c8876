import { useEffect, useRef, useState } from 'preact/hooks';
import QRCode from 'qrcode';
import { currentSession, gql, may } from './api';
import { usePages } from './filters';
import { CopyButton, ErrorNote, Link, messageOf, money, navigate, useData, useLocation, when, Pager } from './ui';

const PAGE_SIZE = 10;

const LINK_FIELDS =
  'id name description reference isActive status amount currency paymentLinkUrl paymentLinkCode paymentLinkType authOption limit frequencyId numberOfPayments dateCreated';

/** The words for `PaymentLink.status`. */
const STATUS_LABELS: Record<string, string> = { ACTIVE: 'Active', PAID: 'Paid', LIMIT_REACHED: 'Limit reached', DISABLED: 'Disabled' };

const LINKS = `query Links($filter: PaymentLinkFilterInput, $first: Int, $after: String) {
  paymentLinks(filter: $filter, first: $first, after: $after) {
    edges { cursor node { ${LINK_FIELDS} } }
    pageInfo { hasNextPage endCursor }
    totalCount
  }
}`;

function Qr(props: { url: string; name: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (canvas.current) void QRCode.toCanvas(canvas.current, props.url, { width: 160, margin: 1 });
  }, [props.url]);
  return <canvas ref={canvas} class="qr" role="img" aria-label={`QR code of the link ${props.name}`} />;
}

function LinkRow(props: { link: any; onChange: () => void }) {
  const l = props.link;
  const [qr, setQr] = useState(false);
  const [error, setError] = useState<string>();
  const toggle = async () => {
    setError(undefined);
    try {
      await gql(`mutation Toggle($id: Int!) { ${l.isActive ? 'deactivatePaymentLink' : 'activatePaymentLink'}(id: $id) { id isActive } }`, { id: l.id });
      props.onChange();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <li class="link-card" data-link-reference={l.reference}>
      <div class="link-head">
        <h3>{l.name}</h3>
        <span class={`pill ${l.status === 'ACTIVE' ? 'pill-on' : 'pill-off'}`} data-status={l.status}>
          {STATUS_LABELS[l.status] ?? l.status}
        </span>
      </div>
      <p class="muted">
        {l.paymentLinkType} · {l.amount ? money(l.amount, l.currency) : `${l.currency}, customer enters the amount`} ·{' '}
        {l.authOption === 'NOAUTH' ? 'no 3-D Secure' : '3-D Secure'}
        {l.limit ? ` · up to ${l.limit} customers` : ''} · created {when(l.dateCreated)}
      </p>
      <p class="mono small">
        <a href={l.paymentLinkUrl} target="_blank" rel="noopener">
          {l.paymentLinkUrl}
        </a>
      </p>
      <div class="actions">
        <CopyButton text={l.paymentLinkUrl} label="Copy link" />
        <button type="button" class="secondary" aria-expanded={qr} onClick={() => setQr(!qr)}>
          QR code
        </button>
        {may('links.write') && (
          <>
            <Link class="button secondary" href={`/dashboard/links/${l.id}`}>
              Edit <span class="sr-only">{l.name}</span>
            </Link>
            <button type="button" class="secondary" onClick={toggle}>
              {l.isActive ? 'Disable' : 'Activate'} <span class="sr-only">{l.name}</span>
            </button>
          </>
        )}
        <Link class="button secondary" href={`/dashboard/orders?link=${l.id}`}>
          Orders <span class="sr-only">of {l.name}</span>
        </Link>
      </div>
      {qr && <Qr url={l.paymentLinkUrl} name={l.name} />}
      <ErrorNote error={error} />
    </li>
  );
}

/** Links with search and keyset pagination. */
export function PaymentLinks() {
  const { query } = useLocation();
  const search = query.get('q') ?? '';
  const { cursors, setCursors, after } = usePages(search);
  const list = useData(() => gql(LINKS, { filter: search ? { search } : null, first: PAGE_SIZE, after }), [search, after]);
  return (
    <>
      <h1>Payment links</h1>
      <div class="toolbar">
        <form
          role="search"
          onSubmit={(e) => {
            e.preventDefault();
            const q = (new FormData(e.currentTarget as HTMLFormElement).get('q') as string).trim();
            navigate(`/dashboard/links${q ? `?q=${encodeURIComponent(q)}` : ''}`);
          }}
        >
          <label for="link-search">Search links</label>
          <input id="link-search" name="q" type="search" defaultValue={search} key={search} />
          <button type="submit" class="secondary">
            Search
          </button>
        </form>
        {may('links.write') && (
          <Link class="button" href="/dashboard/links/new">
            New payment link
          </Link>
        )}
      </div>
      <ErrorNote error={list.error} />
      {list.data && (
        <>
          <p aria-live="polite">
            {list.data.paymentLinks.totalCount} link{list.data.paymentLinks.totalCount === 1 ? '' : 's'}
          </p>
          <ul class="links">
            {list.data.paymentLinks.edges.map((e: any) => (
              <LinkRow key={e.node.id} link={e.node} onChange={list.reload} />
            ))}
          </ul>
          <Pager cursors={cursors} setCursors={setCursors} pageInfo={list.data.paymentLinks.pageInfo} />
        </>
      )}
    </>
  );
}

type LinkType = 'SC' | 'MC' | 'SUB';

/** What a link of this shape will do, in words, as the form is filled. */
function rulesOf(type: LinkType, amount: string, limit: string, auth: string, currency: string, schedule = 'monthly, 12 payments in all'): string[] {
  const rules: string[] = [];
  if (type === 'SC') rules.push('Single charge: the link accepts one successful payment, then stops accepting payments.');
  if (type === 'MC')
    rules.push(
      limit
        ? `Multiple charge: up to ${limit} paying customer${limit === '1' ? '' : 's'}, then the link stops accepting payments.`
        : 'Multiple charge: any number of customers can pay, until you disable the link.',
    );
  if (type === 'SUB') rules.push(`Subscription: the customer's card is charged again on the schedule of the link: ${schedule}.`);
  if (type === 'SUB' && limit) rules.push(`Up to ${limit} subscriber${limit === '1' ? '' : 's'}.`);
  const code = currency || 'NGN';
  // An amount as typed so far is shown in the one money format once it is a valid amount.
  const shown = /^\d{1,12}(\.\d{1,2})?$/.test(amount) ? money(amount, code) : `${code} ${amount}`;
  rules.push(amount ? `Every payment is ${shown}.` : `The customer enters the amount (${code}).`);
  rules.push(auth === 'NOAUTH' ? 'Cards are charged without 3-D Secure.' : 'Card payments are confirmed with 3-D Secure.');
  return rules;
}

/** "weekly, 4 payments in all", from the form's choices. */
function scheduleOf(frequencies: Array<{ id: number; name: string }> | undefined, frequencyId: string, payments: string): string {
  const name = frequencies?.find((f) => String(f.id) === frequencyId)?.name ?? (frequencyId === '6' ? 'Monthly' : `frequency ${frequencyId}`);
  const n = payments.trim() || '12';
  return `${name.toLowerCase()}, ${n} payment${n === '1' ? '' : 's'} in all`;
}

/** Create (no id) or edit a link: only for a role allowed to write links. */
export function LinkEditor(props: { id?: number }) {
  if (!may('links.write')) {
    return (
      <>
        <p>
          <Link href="/dashboard/links">← Payment links</Link>
        </p>
        <p role="status">Your role ({currentSession()?.member.role.toLowerCase()}) does not allow creating or editing payment links.</p>
      </>
    );
  }
  return <LinkForm id={props.id} />;
}

function LinkForm(props: { id?: number }) {
  const existing = useData(
    () => (props.id ? gql(`query Link($id: Int) { paymentLink(id: $id) { ${LINK_FIELDS} } }`, { id: props.id }) : Promise.resolve(null)),
    [props.id],
  );
  const link = existing.data?.paymentLink;
  const [type, setType] = useState<LinkType>('SC');
  const [amount, setAmount] = useState('');
  const [limit, setLimit] = useState('');
  const [auth, setAuth] = useState('AUTH');
  const [currency, setCurrency] = useState('NGN');
  const [frequencyId, setFrequencyId] = useState('6');
  const [payments, setPayments] = useState('12');
  const frequencies = useData(() => gql('{ frequencies { id name } }'), []);
  const [error, setError] = useState<string>();
  const [saved, setSaved] = useState<any>(null);
  const [sending, setSending] = useState(false);
  /** After a link is created the form starts again empty, ready for the next link. */
  const startAgain = (form: HTMLFormElement) => {
    form.reset();
    setType('SC');
    setAmount('');
    setLimit('');
    setAuth('AUTH');
    setCurrency('NGN');
    setFrequencyId('6');
    setPayments('12');
  };
  useEffect(() => {
    if (!link) return;
    setType(link.paymentLinkCode);
    setAmount(link.amount ?? '');
    setLimit(link.limit ? String(link.limit) : '');
    setAuth(link.authOption);
    setCurrency(link.currency);
    if (link.frequencyId) setFrequencyId(String(link.frequencyId));
    if (link.numberOfPayments) setPayments(String(link.numberOfPayments));
  }, [link?.id]);
  if (props.id && !link) return existing.error ? <ErrorNote error={existing.error} /> : <p>Loading…</p>;

  return (
    <>
      <p>
        <Link href="/dashboard/links">← Payment links</Link>
      </p>
      <h1>{link ? `Edit ${link.name}` : 'New payment link'}</h1>
      <form
        class="editor"
        onSubmit={async (e) => {
          e.preventDefault();
          if (sending) return;
          const form = e.currentTarget as HTMLFormElement;
          const data = new FormData(form);
          const input: Record<string, unknown> = {
            name: String(data.get('name') ?? '').trim(),
            description: String(data.get('description') ?? '').trim(),
            paymentType: type,
            authOption: auth,
            amount: amount.trim() === '' ? null : amount.trim(),
            limit: limit.trim() === '' ? null : Number(limit),
            ...(type === 'SUB' ? { frequencyId: Number(frequencyId), numberOfPayments: Number(payments) } : {}),
          };
          setError(undefined);
          setSending(true);
          try {
            if (link) {
              const r = await gql(`mutation Edit($id: Int!, $input: EditPaymentLinkInput!) { editPaymentLink(id: $id, input: $input) { ${LINK_FIELDS} } }`, {
                id: link.id,
                input,
              });
              setSaved(r.editPaymentLink);
            } else {
              input.currency = currency;
              const r = await gql(`mutation Create($input: CreatePaymentLinkInput!) { createPaymentLink(input: $input) { ${LINK_FIELDS} } }`, { input });
              setSaved(r.createPaymentLink);
              startAgain(form);
            }
          } catch (err) {
            setError(messageOf(err));
          } finally {
            setSending(false);
          }
        }}
      >
        <fieldset>
          <legend>Type</legend>
          {(
            [
              ['SC', 'Single charge'],
              ['MC', 'Multiple charge'],
              ['SUB', 'Subscription'],
            ] as const
          ).map(([code, label]) => (
            <label class="choice">
              <input type="radio" name="paymentType" value={code} checked={type === code} onChange={() => setType(code)} /> {label}
            </label>
          ))}
        </fieldset>
        <div class="field">
          <label for="l-name">Name</label>
          <input id="l-name" name="name" required maxLength={200} defaultValue={link?.name ?? ''} />
        </div>
        <div class="field">
          <label for="l-description">Description</label>
          <textarea id="l-description" name="description" required maxLength={2000} defaultValue={link?.description ?? ''} />
        </div>
        <div class="field">
          <label for="l-currency">Currency</label>
          <select
            id="l-currency"
            name="currency"
            value={currency}
            disabled={!!link}
            onChange={(e) => setCurrency((e.currentTarget as HTMLSelectElement).value)}
          >
            {['NGN', 'USD', 'GBP', 'EUR', 'GHS', 'KES'].map((c) => (
              <option value={c}>{c}</option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="l-amount">Amount (leave empty to let the customer enter it)</label>
          <input
            id="l-amount"
            name="amount"
            inputMode="decimal"
            pattern="[0-9]+(\.[0-9]{1,2})?"
            value={amount}
            onInput={(e) => setAmount((e.currentTarget as HTMLInputElement).value)}
          />
        </div>
        {type !== 'SC' && (
          <div class="field">
            <label for="l-limit">Limit of paying customers (optional)</label>
            <input
              id="l-limit"
              name="limit"
              type="number"
              min={1}
              step={1}
              value={limit}
              onInput={(e) => setLimit((e.currentTarget as HTMLInputElement).value)}
            />
          </div>
        )}
        {type === 'SUB' && (
          <div class="field">
            <label for="l-frequency">Charged</label>
            <select id="l-frequency" name="frequencyId" value={frequencyId} onChange={(e) => setFrequencyId((e.currentTarget as HTMLSelectElement).value)}>
              {(frequencies.data?.frequencies ?? [{ id: 6, name: 'Monthly' }]).map((f: { id: number; name: string }) => (
                <option value={String(f.id)}>{f.name}</option>
              ))}
            </select>
          </div>
        )}
        {type === 'SUB' && (
          <div class="field">
            <label for="l-payments">Number of payments</label>
            <input
              id="l-payments"
              name="numberOfPayments"
              type="number"
              min={1}
              max={1000}
              step={1}
              value={payments}
              onInput={(e) => setPayments((e.currentTarget as HTMLInputElement).value)}
            />
          </div>
        )}
        <div class="field">
          <label for="l-auth">Card authentication</label>
          <select id="l-auth" name="authOption" value={auth} onChange={(e) => setAuth((e.currentTarget as HTMLSelectElement).value)}>
            <option value="AUTH">3-D Secure</option>
            <option value="NOAUTH">No 3-D Secure</option>
          </select>
        </div>
        <section class="rules" aria-live="polite" aria-label="Rules of this link">
          <h2>Rules</h2>
          <ul>
            {rulesOf(
              type,
              amount.trim(),
              type === 'SC' ? '' : limit.trim(),
              auth,
              currency,
              scheduleOf(frequencies.data?.frequencies, frequencyId, payments),
            ).map((r) => (
              <li>{r}</li>
            ))}
          </ul>
        </section>
        <div class="actions">
          <button type="submit" disabled={sending} aria-busy={sending}>
            {sending ? (link ? 'Saving…' : 'Creating link…') : link ? 'Save changes' : 'Create link'}
          </button>
        </div>
        <ErrorNote error={error} />
      </form>
      {saved && (
        <section class="panel saved" role="status">
          <h2>{link ? 'Saved' : 'Link created'}</h2>
          <p>
            <strong>{saved.name}</strong> · <span class="mono">{saved.reference}</span> · {saved.paymentLinkType}
          </p>
          <p class="mono small">
            <a href={saved.paymentLinkUrl} target="_blank" rel="noopener">
              {saved.paymentLinkUrl}
            </a>
          </p>
          <div class="actions">
            <CopyButton text={saved.paymentLinkUrl} label="Copy link" />
            <Link class="button secondary" href="/dashboard/links">
              Back to payment links
            </Link>
          </div>
          <Qr url={saved.paymentLinkUrl} name={saved.name} />
        </section>
      )}
    </>
  );
}
