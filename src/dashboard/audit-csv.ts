import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context';
import type { Tenant } from '../merchants/tenant';
import type { AuditEntryView } from '../merchants/audit/audit.service';
import { DomainError } from '../shared/errors';
import { noteFailedAuthentication } from '../protection';
import { cookieValue, SESSION_COOKIE } from '../merchants/dashboard-session-http';

/** The columns of the export, in order. */
export const AUDIT_CSV_HEADER = ['at', 'action', 'actorType', 'actorLabel', 'target', 'ip', 'environment'] as const;

/** What a spreadsheet would read as a formula when a cell starts with it. */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV cell (RFC 4180): a cell a spreadsheet would run as a formula is prefixed with `'`;
 * a cell holding a quote, comma or line break is quoted, its quotes doubled.
 */
export function csvCell(value: string | null | undefined): string {
  let text = value ?? '';
  if (FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record, CRLF-terminated. */
export const csvRow = (cells: ReadonlyArray<string | null | undefined>): string => `${cells.map(csvCell).join(',')}\r\n`;

const entryRow = (e: AuditEntryView): string => csvRow([e.at.toISOString(), e.action, e.actorType, e.actorLabel, e.target, e.ip, e.environment]);

async function* csvLines(entries: AsyncIterable<AuditEntryView>): AsyncGenerator<string> {
  yield csvRow(AUDIT_CSV_HEADER);
  for await (const entry of entries) yield entryRow(entry);
}

type ExportQuery = { environment?: string; action?: string; actorType?: string; from?: string; to?: string };

const STATUS: Partial<Record<DomainError['kind'], number>> = { unauthenticated: 401, forbidden: 403, bad_input: 400, validation: 400 };

/**
 * `GET /dashboard/api/audit.csv`: the audit log as the caller may read it, filtered by the query
 * (`action`, `actorType`, `from`, `to`), newest first, streamed as CSV. The caller is an api-key
 * (the `api-key` header, server to server) or the dashboard session (its cookie, for the
 * environment named by `environment`). A plain link downloads it: a read, changing nothing, and
 * the session cookie is SameSite=Strict, so no other site's page sends it. Who may read the log
 * is the audit service's decision (the same check as the `auditLog` query).
 */
export function registerAuditExport(app: FastifyInstance, ctx: AppContext): void {
  const tenantOf = async (request: FastifyRequest<{ Querystring: ExportQuery }>): Promise<Tenant> => {
    const header = request.headers['api-key'];
    const apiKey = Array.isArray(header) ? header[0] : header;
    const token = cookieValue(request.headers, SESSION_COOKIE);
    const environment = typeof request.query.environment === 'string' ? request.query.environment : undefined;
    const found =
      apiKey === undefined && token ? await ctx.services.dashboardSessions.tenantOf(token, environment) : await ctx.services.auth.authenticate(apiKey);
    return { ...found, ip: request.ip };
  };

  app.get<{ Querystring: ExportQuery }>('/dashboard/api/audit.csv', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      const tenant = await tenantOf(request);
      const q = request.query;
      const entries = ctx.services.audit.entries(tenant, { action: q.action, actorType: q.actorType, from: q.from, to: q.to });
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="audit-log-${tenant.mode}.csv"`)
        .header('x-content-type-options', 'nosniff')
        .send(Readable.from(csvLines(entries)));
    } catch (err) {
      const status = err instanceof DomainError ? STATUS[err.kind] : undefined;
      if (status === undefined) throw err;
      if (status === 401) await noteFailedAuthentication(request);
      return reply.code(status).send({ message: (err as DomainError).message });
    }
  });
}
