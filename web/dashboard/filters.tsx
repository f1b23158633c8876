import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { navigate } from './ui';

type Cursors = (string | null)[];

/**
 * The pages of a list seen so far, for `Pager`: the `after` cursor of each, the current one last.
 * Back to the first page whenever `key` (the list's filter as the URL holds it) changes.
 */
export function usePages(key: string): { cursors: Cursors; setCursors: (update: (c: Cursors) => Cursors) => void; after: string | null } {
  const [cursors, setCursors] = useState<Cursors>([null]);
  useEffect(() => setCursors([null]), [key]);
  return { cursors, setCursors, after: cursors[cursors.length - 1] ?? null };
}

/** The start of the local day `day` ("2026-11-26"), as the API takes a date-time. */
export function startOfDay(day: string): string {
  return new Date(`${day}T00:00:00`).toISOString();
}

/** The end of the local day `day` (the next day's start): a filter's `to` day is included whole. */
export function endOfDay(day: string): string {
  return new Date(new Date(`${day}T00:00:00`).getTime() + 86_400_000).toISOString();
}

/**
 * A list's filter form: its fields' values go to the page's query string (trimmed, empty ones left
 * out, then the `keep` parameters of the current query), so a filtered list can be linked to and
 * survives a reload. The form is made anew whenever the query changes, so the fields show it.
 */
export function FilterForm(props: {
  label: string;
  path: string;
  query: URLSearchParams;
  keep?: string[];
  /** A Clear button, back to the unfiltered list. */
  clear?: boolean;
  /** More actions after Apply filters (and Clear). */
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <form
      class="filters"
      aria-label={props.label}
      key={props.query.toString()}
      onSubmit={(e) => {
        e.preventDefault();
        const data = new FormData(e.currentTarget as HTMLFormElement);
        const params = new URLSearchParams();
        for (const [name, value] of data) if (typeof value === 'string' && value.trim() !== '') params.set(name, value.trim());
        for (const name of props.keep ?? []) {
          const kept = props.query.get(name);
          if (kept) params.set(name, kept);
        }
        navigate(`${props.path}${params.toString() ? `?${params}` : ''}`);
      }}
    >
      {props.children}
      <div class="actions">
        <button type="submit">Apply filters</button>
        {props.clear && (
          <button type="button" class="secondary" onClick={() => navigate(props.path)}>
            Clear
          </button>
        )}
        {props.actions}
      </div>
    </form>
  );
}

/** A labelled choice of a filter form: `options` are [value, label] pairs; `value` is the one chosen. */
export function SelectField(props: { id: string; name: string; label: string; options: [string, string][]; value: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <select id={props.id} name={props.name}>
        {props.options.map(([v, l]) => (
          <option value={v} selected={v === props.value}>
            {l}
          </option>
        ))}
      </select>
    </div>
  );
}

/** A labelled input of a filter form, showing `value` at first. */
export function InputField(props: { id: string; name: string; label: string; type: 'date' | 'email'; value: string }) {
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      <input id={props.id} name={props.name} type={props.type} defaultValue={props.value} />
    </div>
  );
}
