import { AuditActions } from '../../src/merchants/audit/audit-actions';
import { currentEnvironment, gql } from './api';
import { endOfDay, FilterForm, InputField, SelectField, startOfDay, usePages } from './filters';
import { ErrorNote, useData, useLocation, when, Pager } from './ui';

const AUDIT_LOG = `query ($filter: AuditLogFilter, $first: Int, $after: String) {
  auditLog(filter: $filter, first: $first, after: $after) {
    edges { node { id at action actorType actorLabel target ip environment } }
    pageInfo { hasNextPage endCursor }
  }
}`;

const PAGE_SIZE = 50;
const ACTIONS: [string, string][] = [['', 'Any action'], ...Object.values(AuditActions).map((a): [string, string] => [a, a])];
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
  if (from) filter.from = startOfDay(from);
  const to = query.get('to');
  if (to) filter.to = endOfDay(to);
  return filter;
}

/** The merchant's audit log, newest first, with filters and the same entries as a CSV download. */
export function AuditLog() {
  const { query } = useLocation();
  const key = query.toString();
  const { cursors, setCursors, after } = usePages(key);
  const filter = filterOf(query);
  const list = useData(() => gql(AUDIT_LOG, { filter, first: PAGE_SIZE, after }), [key, after]);
  const entries = (list.data?.auditLog.edges ?? []).map((e: any) => e.node);
  const csv = `/dashboard/api/audit.csv?${new URLSearchParams({ environment: currentEnvironment(), ...filter })}`;

  return (
    <>
      <h1>Audit log</h1>
      <p class="muted">Every change made through any interface, and every dashboard sign-in. Entries are never changed or deleted.</p>
      <FilterForm
        label="Filter the audit log"
        path="/dashboard/audit"
        query={query}
        clear
        actions={
          <a class="button secondary" href={csv} download>
            Download CSV
          </a>
        }
      >
        <SelectField id="a-action" name="action" label="Action" options={ACTIONS} value={query.get('action') ?? ''} />
        <SelectField id="a-actor" name="actor" label="Actor" options={ACTORS} value={query.get('actor') ?? ''} />
        <InputField id="a-from" name="from" label="From" type="date" value={query.get('from') ?? ''} />
        <InputField id="a-to" name="to" label="To" type="date" value={query.get('to') ?? ''} />
      </FilterForm>
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
