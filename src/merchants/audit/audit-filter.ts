import { badInput, dateFilter, knownText } from '../../shared/list-filter';
import type { AuditActorType } from './audit-entry.entity';
import { AuditActions, type AuditAction } from './audit-actions';

/** An audit-log filter as an adapter hands it over: nothing in it is trusted yet. */
export interface AuditFilterCriteria {
  action?: unknown;
  actorType?: unknown;
  /** Entries at or after this instant (a Date, or ISO 8601 text). */
  from?: unknown;
  /** Entries before this instant (a Date, or ISO 8601 text). */
  to?: unknown;
}

/** A checked audit-log filter: a known action and actor kind, instants a query can compare with. */
export interface AuditLogFilter {
  action?: AuditAction;
  actorType?: AuditActorType;
  from?: Date;
  to?: Date;
}

export const AUDIT_ACTIONS: readonly AuditAction[] = Object.values(AuditActions);
export const AUDIT_ACTOR_TYPES: readonly AuditActorType[] = ['MEMBER', 'API_KEY', 'ADMIN', 'SYSTEM'];

/**
 * Checks an audit-log filter before any of it reaches SQL: an action the log names, an actor
 * kind, and `from` not after `to`. Throws a `bad_input` error otherwise.
 */
export function auditLogFilter(criteria: AuditFilterCriteria = {}): AuditLogFilter {
  const filter: AuditLogFilter = {
    action: knownText('action', criteria.action === '' ? undefined : criteria.action, AUDIT_ACTIONS) as AuditAction | undefined,
    actorType: knownText('actorType', criteria.actorType === '' ? undefined : criteria.actorType, AUDIT_ACTOR_TYPES) as AuditActorType | undefined,
    from: dateFilter('from', criteria.from),
    to: dateFilter('to', criteria.to),
  };
  if (filter.from && filter.to && filter.from.getTime() > filter.to.getTime()) throw badInput('The from filter must not be after the to filter.');
  for (const key of Object.keys(filter) as Array<keyof AuditLogFilter>) if (filter[key] === undefined) delete filter[key];
  return filter;
}

/** The SQL conditions (on `audit_entry`) of a checked filter, and their parameters. */
export function auditFilterSql(filter: AuditLogFilter): { sql: string; params: unknown[] } {
  const parts: string[] = [];
  const params: unknown[] = [];
  if (filter.action) (parts.push('action = ?'), params.push(filter.action));
  if (filter.actorType) (parts.push('actor_type = ?'), params.push(filter.actorType));
  if (filter.from) (parts.push('at >= ?'), params.push(filter.from));
  if (filter.to) (parts.push('at < ?'), params.push(filter.to));
  return { sql: parts.map((p) => ` and ${p}`).join(''), params };
}
