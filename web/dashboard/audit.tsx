import { useEffect, useState } from 'preact/hooks';
import { AuditActions } from '../../src/merchants/audit/audit-actions';
import { currentEnvironment, gql } from './api';
import { ErrorNote, navigate, useData, useLocation, when, Pager } from './ui';

const AUDIT_LOG = `query ($filter: AuditLogFilter, $first: Int, $after: String) {
  auditLog(filter: $filter, first: $first, after: $after) {
    edges { node { id at action actorType actorLabel target ip environment } }
    pageInfo { hasNextPage endCursor }
  }
}`;

const PAGE_SIZE = 50;
const ACTIONS: string[] = Object.values(AuditActions);
const ACTORS: [string, string][] = [
  ['', 'Anyone'],
  ['MEMBER', 'Member'],
  ['API_KEY', 'API key'],
  ['ADMIN', 'Platform admin'],
  ['SYSTEM', 'System'],
];

/** The filter of the page's query string, as the API takes it: dates are whole local days, `to` included. */
function filterOf(query: URLSearchParams): Record<string, string> {
  const filter: Record<string, string> = {};
  const action = query.get('action');
  if (action) filter.action = action;
  const actor = query.get('actor');
  if (actor) filter.actorType = actor;
  const from = query.get('from');
  if (from) filter.from = new Date(`${from}T00:00:00`).toISOString();
  const to = query.get('to');
  if (to) filter.to = new Date(new Date(`${to}T00:00:00`).getTime() + 86_400_000).toISOString();
  return filter;
}

/** The merchant's audit log, newest first, with filters and the same entries as a CSV download. */
export function AuditLog() {
  const { query } = useLocation();
  const key = query.toString();
  const [cursors, setCursors] = useState<(string | null)[]>([null]);
  useEffect(() => setCursors([null]), [key]);
  const after = cursors[cursors.length - 1] ?? null;
  const filter = filterOf(query);
  const list = useData(() => gql(AUDIT_LOG, { filter, first: PAGE_SIZE, after }), [key, after]);
  const entries = (list.data?.auditLog.edges ?? []).map((e: any) => e.node);
  const csv = `/dashboard/api/audit.csv?${new URLSearchParams({ environment: currentEnvironment(), ...filter })}`;

  return (
    <>
      <h1>Audit log</h1>
      <p class="muted">Every change made through any interface, and every dashboard sign-in. Entries are never changed or deleted.</p>
      <form
        class="filters"
        aria-label="Filter the audit log"
        key={key}
        onSubmit={(e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget as HTMLFormElement);
          const params = new URLSearchParams();
          for (const [name, value] of data) if (typeof value === 'string' && value.trim() !== '') params.set(name, value.trim());
          navigate(`/dashboard/audit${params.toString() ? `?${params}` : ''}`);
        }}
      >
        <div class="field">
          <label for="a-action">Action</label>
          <select id="a-action" name="action">
            <option value="">Any action</option>
            {ACTIONS.map((a) => (
              <option value={a} selected={a === query.get('action')}>
                {a}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="a-actor">Actor</label>
          <select id="a-actor" name="actor">
            {ACTORS.map(([v, l]) => (
              <option value={v} selected={v === (query.get('actor') ?? '')}>
                {l}
              </option>
            ))}
          </select>
        </div>
        <div class="field">
          <label for="a-from">From</label>
          <input id="a-from" name="from" type="date" defaultValue={query.get('from') ?? ''} />
        </div>
        <div class="field">
          <label for="a-to">To</label>
          <input id="a-to" name="to" type="date" defaultValue={query.get('to') ?? ''} />
        </div>
        <div class="actions">
          <button type="submit">Apply filters</button>
          <button type="button" class="secondary" onClick={() => navigate('/dashboard/audit')}>
            Clear
          </button>
          <a class="button secondary" href={csv} download>
            Download CSV
          </a>
        </div>
      </form>
      <ErrorNote error={list.error} />
      {list.data && (
        <>
          {entries.length === 0 ? (
            <p>No entries.</p>
          ) : (
            <table class="audit-log">
              <caption class="sr-only">Audit log entries, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Action</th>
                  <th scope="col">Actor</th>
                  <th scope="col">Target</th>
                  <th scope="col">IP</th>
                  <th scope="col">Environment</th>
                </tr>
              </thead>
              <tbody>
                {entries.map((e: any) => (
                  <tr class="audit-entry" data-entry-id={e.id}>
                    <td>{when(e.at)}</td>
                    <td class="mono">{e.action}</td>
                    <td>
                      {e.actorLabel} <span class="muted small">({e.actorType})</span>
                    </td>
                    <td>{e.target ?? '—'}</td>
                    <td class="mono">{e.ip ?? '—'}</td>
                    <td>{e.environment ?? 'all'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          <Pager cursors={cursors} setCursors={setCursors} pageInfo={list.data.auditLog.pageInfo} />
        </>
      )}
    </>
  );
}
