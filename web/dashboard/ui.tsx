import type { ComponentChildren } from 'preact';
import { useEffect, useState, useCallback } from 'preact/hooks';
import { formatMoney } from '../../src/shared/money';
import { ORDER_STATUS_NAMES } from '../../src/orders/order-status';
import { ApiError } from './api';

/** In-app navigation under /dashboard, with the History API (no reload). */
export function navigate(to: string): void {
  if (location.pathname + location.search === to) return;
  history.pushState(null, '', to);
  dispatchEvent(new PopStateEvent('popstate'));
}

export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((t) => t + 1);
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return { path: location.pathname.replace(/\/+$/, '') || '/dashboard', query: new URLSearchParams(location.search) };
}

export function Link(props: { href: string; children: ComponentChildren; class?: string; current?: boolean }) {
  return (
    <a
      href={props.href}
      class={props.class}
      aria-current={props.current ? 'page' : undefined}
      onClick={(e) => {
        if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
        e.preventDefault();
        navigate(props.href);
      }}
    >
      {props.children}
    </a>
  );
}

/** Loads data with an async function; reload() fetches again. */
export function useData<T>(load: () => Promise<T>, deps: unknown[]): { data?: T; error?: string; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (err: unknown) => live && setState({ error: messageOf(err), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}

export function ErrorNote(props: { error?: string }) {
  if (!props.error) return null;
  return (
    <p class="error" role="alert">
      {props.error}
    </p>
  );
}

export function Status(props: { status: string; statusId?: number }) {
  const tone = props.statusId === 5 ? 'ok' : props.statusId === 4 || props.statusId === 7 ? 'bad' : 'wait';
  return <span class={`status status-${tone}`}>{displayStatus(props.status)}</span>;
}

/**
 * A status in the API's and the webhooks' own words (the service's one status vocabulary),
 * only starting with a capital as a label does: "pending authentication" → "Pending authentication".
 */
export function displayStatus(status: string): string {
  return status.charAt(0).toUpperCase() + status.slice(1);
}

/** The order statuses by id, as the filters offer them: the same words as `displayStatus`. */
export const ORDER_STATUSES: [number, string][] = Object.entries(ORDER_STATUS_NAMES).map(([id, name]) => [Number(id), displayStatus(name)]);

/** "NGN 15,000.00": the service's one money format (exact decimals, never a float); "—" for no amount. */
export function money(amount: string | null | undefined, currency: string): string {
  if (amount === null || amount === undefined || amount === '') return '—';
  return formatMoney(amount, currency);
}

/** Reloads a few times over the next seconds: webhook attempts and settlements happen in the background. */
export function followUp(reload: () => void): void {
  reload();
  for (const ms of [600, 1500, 3000, 6000, 10000]) setTimeout(reload, ms);
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

export function CopyButton(props: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="secondary"
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(props.text);
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        } catch {
          setDone(false);
        }
      }}
    >
      {done ? 'Copied' : props.label}
    </button>
  );
}

type Cursors = (string | null)[];

/** Previous / next page buttons over a connection: `cursors` holds the `after` cursor of every page seen, the current one last. */
export function Pager(props: {
  cursors: Cursors;
  setCursors: (update: (c: Cursors) => Cursors) => void;
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}) {
  return (
    <div class="pager">
      <button type="button" class="secondary" disabled={props.cursors.length < 2} onClick={() => props.setCursors((c) => c.slice(0, -1))}>
        Previous page
      </button>
      <button type="button" class="secondary" disabled={!props.pageInfo.hasNextPage} onClick={() => props.setCursors((c) => [...c, props.pageInfo.endCursor])}>
        Next page
      </button>
    </div>
  );
}
