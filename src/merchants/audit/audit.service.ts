import type { EntityManager } from '@mikro-orm/postgresql';
import type { Clock } from '../../shared/clock';
import { callerOf, type Tenant } from '../tenant';
import type { ReadRouting } from '../../db/read-routing';
import type { RunSql } from '../../db/sql';
import type { EnvironmentMode } from '../app-environment.entity';
import type { AuditActorType } from './audit-entry.entity';
import { authorize, testModeOnly } from '../authorization';
import type { AuditAction } from './audit-actions';
import { auditFilterSql, auditLogFilter, type AuditFilterCriteria, type AuditLogFilter } from './audit-filter';

export { AuditActions, type AuditAction } from './audit-actions';

/** Who acts: its kind and how the log names it. */
export interface AuditActor {
  type: AuditActorType;
  /** A member's email, an api-key's hint (never the key itself), `admin` or `system`. */
  label: string;
}

/** The platform operator: the admin token (GraphQL `x-admin-token`) or the command line on the server. */
export const ADMIN_ACTOR: AuditActor = Object.freeze({ type: 'ADMIN', label: 'admin' });
/** The service acting by itself: the scheduler, the first-run demo seed, a hosted payment page. */
export const SYSTEM_ACTOR: AuditActor = Object.freeze({ type: 'SYSTEM', label: 'system' });

/** Who acts and from where, for a change not made through a tenant (an operator's, a sign-in). */
export interface AuditOrigin {
  actor: AuditActor;
  /** The address of the request, when the interface knows it. */
  ip?: string | null;
}

export interface AuditRecord extends AuditOrigin {
  action: AuditAction;
  subsidiaryId: number;
  target?: string | null;
  environment?: EnvironmentMode | null;
}

/**
 * The actor a tenant stands for: the member acting, by email; else the api-key it presented, by
 * its hint (a dashboard session opened with a key acts through that key); a tenant without either
 * is the service itself.
 */
export function auditActorOf(tenant: Tenant): AuditActor {
  if (tenant.member) return { type: 'MEMBER', label: tenant.member.email };
  if (tenant.keyId !== undefined) return { type: 'API_KEY', label: tenant.keyHint ?? `api-key ${tenant.keyId}` };
  return SYSTEM_ACTOR;
}

/** The origin of a change made by a tenant: its actor, and the address of its request. */
export function auditOriginOf(tenant: Tenant): AuditOrigin {
  return { actor: auditActorOf(tenant), ip: tenant.ip ?? null };
}

/** The entry of a change the tenant made in its environment: who, from where, in which environment. */
export function auditEntryFor(tenant: Tenant, action: AuditAction, target: string | null): AuditRecord {
  return { ...auditOriginOf(tenant), action, subsidiaryId: tenant.subsidiaryId, environment: tenant.mode, target };
}

export interface AuditEntryView {
  id: string;
  at: Date;
  action: string;
  actorType: AuditActorType;
  actorLabel: string;
  target: string | null;
  ip: string | null;
  environment: EnvironmentMode | null;
}

/** An entry with the time it is recorded at (the audit service's clock: `AuditService.stamped`). */
export type StampedAuditRecord = AuditRecord & { at: Date };

/**
 * The entry's insert as a CTE of a caller's statement, so that a change written in one statement
 * records its entry in it too (as the outbox's `outboxEventSql`): `when` is the caller's SQL
 * condition for writing it (its own write happened); `placeholder(i)` names the i-th of
 * `auditEntryParams`' parameters, each used once, in order. A data-modifying CTE runs whether
 * or not the statement reads it.
 */
export function auditEntrySql(when: string, placeholder: (i: number) => string): string {
  const p = placeholder;
  return `audit as (
          insert into audit_entry (at, subsidiary_id, action, actor_type, actor_label, target, ip, environment)
          select ${p(0)}::timestamptz, ${p(1)}::int, ${p(2)}::text, ${p(3)}::text, ${p(4)}::text, ${p(5)}::text, ${p(6)}::text, ${p(7)}::text
           where ${p(8)}::boolean and ${when}
        )`;
}

/** The parameters of `auditEntrySql`, in its order; for null, no entry. */
export function auditEntryParams(entry: StampedAuditRecord | null): unknown[] {
  if (entry === null) return [null, null, null, null, null, null, null, null, false];
  return [
    entry.at,
    entry.subsidiaryId,
    entry.action,
    entry.actor.type,
    entry.actor.label,
    entry.target ?? null,
    entry.ip ?? null,
    entry.environment ?? null,
    true,
  ];
}

/**
 * The merchant's audit log. `record` writes in the transaction of the change it records (the
 * caller's), so a change and its entry commit or roll back together. The table is append-only:
 * nothing here (nor anywhere) updates or deletes an entry, and the database refuses it.
 */
export class AuditService {
  /** `reads`: where the log is read (the read replica, unless the caller wrote lately); entries are written in the caller's transaction. */
  constructor(
    private readonly clock: Clock,
    private readonly reads: ReadRouting,
  ) {}

  /** Appends an entry inside `em`'s transaction (or alone, when `em` has none). */
  async record(em: EntityManager, entry: AuditRecord): Promise<void> {
    const trx = em.isInTransaction() ? em.getTransactionContext() : undefined;
    await this.recordWith((sql, params) => em.getConnection().execute(sql, params, 'run', trx), entry);
  }

  /** Appends an entry with `execute` (a statement of the caller's transaction: plain SQL, `?` placeholders). */
  async recordWith(execute: (sql: string, params: unknown[]) => Promise<unknown>, entry: AuditRecord): Promise<void> {
    // The same columns, in the same order, as auditEntrySql's (its last parameter, "write it", left out).
    const params = auditEntryParams({ ...entry, at: this.clock.now() }).slice(0, 8);
    await execute(
      `insert into audit_entry (at, subsidiary_id, action, actor_type, actor_label, target, ip, environment) values (?, ?, ?, ?, ?, ?, ?, ?)`,
      params,
    );
  }

  /** `entry` with the time it is recorded at now, for a caller writing it with `auditEntrySql`. */
  stamped(entry: AuditRecord): StampedAuditRecord {
    return { ...entry, at: this.clock.now() };
  }

  /** An entry for a change the tenant made in its environment. */
  recordFor(em: EntityManager, tenant: Tenant, action: AuditAction, target: string | null): Promise<void> {
    return this.record(em, auditEntryFor(tenant, action, target));
  }

  /**
   * As recordFor, for a change of the merchant's team (an invitation, a role, a removal, a reset
   * link): the team is the whole merchant's, so the entry is too (no environment), in the log
   * of either environment, whichever key or session made it.
   */
  recordTeamChange(em: EntityManager, tenant: Tenant, action: AuditAction, target: string | null): Promise<void> {
    return this.record(em, { ...auditEntryFor(tenant, action, target), environment: null });
  }

  /**
   * A page of the log as the tenant may read it, newest first, after the cursor (the last entry
   * of the previous page), narrowed by the filter (checked here: a bad value is `bad_input`).
   * Reading it needs the private key: the public key is readable by anyone from the merchant's
   * pages. An api-key reads its own environment's entries and those of the whole merchant (its
   * creation), never the other environment's: a test key is often in more hands than the live
   * one. For the same reason a reader that reaches the test environment only (a test key, a
   * test-only member) sees an address only on the test environment's entries made with an
   * api-key (the merchant's servers): members' and operators' addresses are their own, whether
   * they signed in, changed the team or acted in the test environment.
   */
  log(tenant: Tenant, limit: number, after?: { at: Date; id: string }, criteria?: AuditFilterCriteria): Promise<AuditEntryView[]> {
    // OWNER and ADMIN members, or the private key (which acts as an owner).
    authorize(tenant, 'secrets');
    return this.page(this.reads.for(callerOf(tenant)), tenant, limit, after, auditLogFilter(criteria));
  }

  /**
   * Every entry the tenant may read that the filter keeps, newest first, read a page at a time
   * (for an export). Authorized and the filter checked before the first entry is read, so a
   * refusal comes before any output.
   */
  entries(tenant: Tenant, criteria?: AuditFilterCriteria, pageSize = 500): AsyncIterable<AuditEntryView> {
    authorize(tenant, 'secrets');
    const filter = auditLogFilter(criteria);
    const run = this.reads.for(callerOf(tenant));
    const page = (after?: { at: Date; id: string }) => this.page(run, tenant, pageSize, after, filter);
    return {
      async *[Symbol.asyncIterator]() {
        let after: { at: Date; id: string } | undefined;
        for (;;) {
          const rows = await page(after);
          yield* rows;
          if (rows.length < pageSize) return;
          const last = rows[rows.length - 1]!;
          after = { at: last.at, id: last.id };
        }
      },
    };
  }

  /**
   * A page of the reader's merchant's entries, newest first, after the cursor, read with `run`:
   * its environment's and the merchant-wide ones (for a reader that reaches the test environment
   * only, addresses only on api-key entries); with `filter` (already checked), those it keeps.
   */
  private async page(run: RunSql, reader: Tenant, limit: number, after?: { at: Date; id: string }, filter: AuditLogFilter = {}): Promise<AuditEntryView[]> {
    const keyset = after ? ' and (at, id) < (?, ?)' : '';
    const narrowed = auditFilterSql(filter);
    const ip = testModeOnly(reader) ? `case when environment is not null and actor_type = 'API_KEY' then ip else null end` : 'ip';
    const rows = await run(
      `select id, at, action, actor_type, actor_label, target, ${ip} as ip, environment from audit_entry
        where subsidiary_id = ? and (environment = ? or environment is null)${narrowed.sql}${keyset} order by at desc, id desc limit ?`,
      [reader.subsidiaryId, reader.mode, ...narrowed.params, ...(after ? [after.at, after.id] : []), limit],
    );
    return rows.map((r) => ({
      id: String(r.id),
      at: new Date(r.at),
      action: r.action,
      actorType: r.actor_type,
      actorLabel: r.actor_label,
      target: r.target,
      ip: r.ip,
      environment: r.environment,
    }));
  }
}
