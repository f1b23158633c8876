import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { validationError } from '../shared/errors';
import { randomReference } from '../shared/random';
import { isQueryableDate } from '../shared/time';
import { badInput, currencyFilter, idInRange, searchFilter } from '../shared/list-filter';
import { callerOf, type Tenant } from '../merchants/tenant';
import type { ReadRouting } from '../db/read-routing';
import { authorize } from '../merchants/authorization';
import { AuditActions, type AuditService } from '../merchants/audit/audit.service';
import { Subsidiary } from '../merchants/subsidiary.entity';
import { AppEnvironment } from '../merchants/app-environment.entity';
import { PaymentLink } from './payment-link.entity';
import { PaymentLinkType } from './payment-link-type.entity';
import { Frequency } from './frequency.entity';
import { linkNotFound } from './link-errors';
import { hasLimit, linkStatus, type LinkShape, type PaymentLinkStatus } from './link-status';
import { boundedCount, pageAndCount, sqlRunner, type Counted, type RunSql } from '../db/sql';
import { EntityRowMapper } from '../db/row-mapper';
import { LINK_COLUMNS, LINK_ROW, LINK_TYPE_ROW } from './link-row';
import { DEFAULT_SUBSCRIPTION_TERMS, validateLinkInput, type PaymentLinkInput } from './payment-link-input';
import { lockLinkForPayment, PAID_STATUSES, type OrderBeingPaid } from './link-usage';

export type { PaymentLinkInput } from './payment-link-input';
import { paymentLinkUrl } from './payment-link-url';

export interface PaymentLinkFilter {
  id?: number;
  isActive?: boolean;
  currency?: string;
  search?: string;
  createdFrom?: Date;
  createdTo?: Date;
}

/**
 * Checks a link-list filter before any of it reaches SQL: an id in the range of its column, a
 * supported currency, search text of bounded length, dates a query can compare with.
 */
export function linkListFilter(criteria: PaymentLinkFilter): PaymentLinkFilter {
  if (!isQueryableDate(criteria.createdFrom) || !isQueryableDate(criteria.createdTo)) {
    throw validationError('The createdFrom and createdTo fields must be dates between the years 1 and 9999.');
  }
  if (criteria.isActive !== undefined && typeof criteria.isActive !== 'boolean') throw badInput('The isActive filter must be true or false.');
  return {
    id: idInRange('id', criteria.id),
    isActive: criteria.isActive,
    currency: currencyFilter('currency', criteria.currency),
    search: searchFilter('search', criteria.search),
    createdFrom: criteria.createdFrom ?? undefined,
    createdTo: criteria.createdTo ?? undefined,
  };
}

/** How the audit log names a link: its id and public reference. */
function linkTarget(link: PaymentLink): string {
  return `link ${link.id} ${link.reference}`;
}

export class PaymentLinkService {
  private readonly link: EntityRowMapper<PaymentLink>;
  private readonly linkType: EntityRowMapper<PaymentLinkType>;
  private run: RunSql | undefined;

  /** `reads`: where the lists are read (the read replica, unless the caller wrote lately); the rest reads the primary. */
  constructor(
    private readonly orm: MikroORM,
    private readonly publicUrl: string,
    private readonly audit: AuditService,
    private readonly reads: ReadRouting,
  ) {
    this.link = new EntityRowMapper(orm, PaymentLink, LINK_ROW);
    this.linkType = new EntityRowMapper(orm, PaymentLinkType, LINK_TYPE_ROW);
  }

  /** A link list row as the plain object the views read (the fields of `PaymentLink` they use). */
  private linkOf(row: Record<string, unknown>): PaymentLink {
    const link = this.link.map(row)!;
    link.type = this.linkType.map(row)!;
    return link;
  }

  paymentLinkUrl(link: PaymentLink): string {
    return paymentLinkUrl(this.publicUrl, link.reference);
  }

  /**
   * Creating, editing, activating and disabling links need the private key: a link is a page on
   * this service's domain that takes money and redirects afterwards, so the public key (readable
   * by anyone from the merchant's web page or app) must not make or change one. Listing and
   * reading links take either key.
   */
  async create(tenant: Tenant, input: PaymentLinkInput): Promise<{ link: PaymentLink; subsidiary: Subsidiary }> {
    authorize(tenant, 'links.write');
    return this.orm.em.fork().transactional(async (em) => {
      const fields = await validateLinkInput(em, input, { creating: true });
      const link = em.create(PaymentLink, {
        environment: em.getReference(AppEnvironment, tenant.environmentId),
        type: em.getReference(PaymentLinkType, fields.typeId),
        name: fields.name,
        description: fields.description,
        reference: randomReference('PL', 16),
        amount: fields.amount,
        currency: fields.currency!,
        authOption: fields.authOption ?? 'AUTH',
        captureMethod: fields.captureMethod,
        mobile: fields.mobile,
        backgroundImage: fields.backgroundImage,
        website: fields.website,
        limit: fields.limit,
        frequency: fields.isSubscription ? em.getReference(Frequency, fields.frequencyId ?? DEFAULT_SUBSCRIPTION_TERMS.frequencyId) : null,
        numberOfPayments: fields.isSubscription ? (fields.numberOfPayments ?? DEFAULT_SUBSCRIPTION_TERMS.numberOfPayments) : null,
        isActive: true,
      });
      await em.flush();
      await this.audit.recordFor(em, tenant, AuditActions.linkCreated, linkTarget(link));
      await em.populate(link, ['type']);
      const subsidiary = await em.findOneOrFail(Subsidiary, { id: tenant.subsidiaryId });
      return { link, subsidiary };
    });
  }

  /** Changes fields only; state and currency stay as they are (private key only). */
  async edit(tenant: Tenant, id: number | string, input: PaymentLinkInput): Promise<{ link: PaymentLink; subsidiary: Subsidiary }> {
    authorize(tenant, 'links.write');
    const linkId = this.parseId(id);
    return this.orm.em.fork().transactional(async (em) => {
      const fields = await validateLinkInput(em, input, { creating: false });
      const link = linkId === undefined ? null : await em.findOne(PaymentLink, { id: linkId, environment: tenant.environmentId }, { populate: ['type'] });
      if (!link) throw linkNotFound();
      if (fields.isSubscription && link.captureMethod === 'MANUAL') {
        throw validationError('The PaymentType field cannot be SUB on a link whose orders are captured later (CaptureMethod MANUAL).');
      }
      link.name = fields.name;
      link.description = fields.description;
      link.type = em.getReference(PaymentLinkType, fields.typeId);
      link.amount = fields.amount;
      if (fields.authOption) link.authOption = fields.authOption;
      link.mobile = fields.mobile;
      link.backgroundImage = fields.backgroundImage;
      link.website = fields.website;
      link.limit = fields.limit;
      // A subscription link keeps its terms unless new ones are given; another link has none.
      const frequencyId = fields.isSubscription ? (fields.frequencyId ?? link.frequency?.id ?? DEFAULT_SUBSCRIPTION_TERMS.frequencyId) : null;
      link.frequency = frequencyId === null ? null : em.getReference(Frequency, frequencyId);
      link.numberOfPayments = fields.isSubscription ? (fields.numberOfPayments ?? link.numberOfPayments ?? DEFAULT_SUBSCRIPTION_TERMS.numberOfPayments) : null;
      await em.flush();
      await this.audit.recordFor(em, tenant, AuditActions.linkUpdated, `${linkTarget(link)} edited`);
      await em.populate(link, ['type'], { refresh: true });
      const subsidiary = await em.findOneOrFail(Subsidiary, { id: tenant.subsidiaryId });
      return { link, subsidiary };
    });
  }

  /** activate / disable (private key only): idempotent; unknown ids (of this tenant) are "payment link not found". */
  async setActive(tenant: Tenant, id: number | string, isActive: boolean): Promise<PaymentLink> {
    authorize(tenant, 'links.write');
    const linkId = this.parseId(id);
    return this.orm.em.fork().transactional(async (em) => {
      const link = linkId === undefined ? null : await em.findOne(PaymentLink, { id: linkId, environment: tenant.environmentId }, { populate: ['type'] });
      if (!link) throw linkNotFound();
      // Idempotent: asking for the state a link is already in changes nothing, and records nothing.
      if (link.isActive === isActive) return link;
      link.isActive = isActive;
      await em.flush();
      await this.audit.recordFor(em, tenant, AuditActions.linkUpdated, `${linkTarget(link)} ${isActive ? 'activated' : 'disabled'}`);
      return link;
    });
  }

  /** The tenant's links, newest first: one query, no entity hydration (REST links/all reads thousands). */
  async list(tenant: Tenant, filter: PaymentLinkFilter = {}): Promise<PaymentLink[]> {
    const where = this.sqlWhere(tenant, filter);
    const rows = await this.listReads(tenant)(
      `select ${LINK_COLUMNS} from payment_link l join payment_link_type t on t.id = l.type_id where ${where.sql} order by l.date_created desc, l.id desc`,
      where.params,
    );
    return rows.map((r) => this.linkOf(r));
  }

  /**
   * REST links/all: the tenant's links, newest first, as the JSON text of the list (the list
   * style of `paymentLinkView`, byte for byte: its field order, money as JSON numbers without
   * trailing zeros, timestamps as ISO 8601 UTC with milliseconds and no zone), concatenated by
   * PostgreSQL in the one query that reads them. Each link's text is kept on its row by a
   * trigger (migration 20261128030000) in three fragments, around the link type's name and the
   * URL prefix; a row without them is written here as the trigger would. `null` when `id` is
   * given and not the tenant's.
   */
  async listJson(tenant: Tenant, filter: { id?: number } = {}): Promise<string | null> {
    const where = this.sqlWhere(tenant, filter);
    const j = (sql: string) => `coalesce(to_json(${sql})::text, 'null')`;
    const written =
      `'{"id":' || l.id || ',"name":' || ${j('l.name')} || ',"paymentType":' || t.payment_type ||` +
      ` ',"logo":' || ${j('l.logo')} || ',"amount":' || coalesce(trim_scale(l.amount)::text, 'null') ||` +
      ` ',"dateCreated":"' || to_char(l.date_created at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') || '"' ||` +
      ` ',"reference":' || ${j('l.reference')} || ',"createdBy":null,"creatorEmail":null,"isActive":' || l.is_active::text ||` +
      ` ',"currency":' || ${j('l.currency')} || ',"limit":' || coalesce(l.customer_limit::text, 'null') ||` +
      ` ',"paymentLinkUrl":' || to_json(u.prefix || l.reference)::text || ',"appEnvironmentId":' || l.environment_id ||` +
      ` ',"paymentLinkType":null,"paymentLinkCode":null,"description":' || ${j('l.description')} || '}'`;
    const [row] = await this.listReads(tenant)(
      `select count(*)::int as n, '[' || coalesce(string_agg(
         case when l.list_json_tail is null then ${written}
              else l.list_json_head || t.payment_type || l.list_json_body || u.url || l.list_json_tail end,
         ',' order by l.date_created desc, l.id desc), '') || ']' as json
         from payment_link l
         join (select id, ${j('payment_link_name')} as payment_type from payment_link_type) t on t.id = l.type_id
         cross join (select x.prefix, substr(x.quoted, 2, length(x.quoted) - 2) as url from (select p as prefix, to_json(p)::text as quoted from (select ?::text as p) a) x) u
        where ${where.sql}`,
      [paymentLinkUrl(this.publicUrl, ''), ...where.params],
    );
    if (filter.id !== undefined && row?.n === 0) return null;
    return (row?.json as string | undefined) ?? '[]';
  }

  /** A keyset page, newest first, after the cursor; and, when asked for, the count of all matching links (exact up to a bound, then an estimate). */
  async page(
    tenant: Tenant,
    filter: PaymentLinkFilter,
    limit: number,
    after?: { createdAt: Date; id: number },
    want: { count: boolean } = { count: true },
  ): Promise<{ rows: PaymentLink[] } & Partial<Counted>> {
    const where = this.sqlWhere(tenant, filter);
    const keyset = after ? ' and (l.date_created, l.id) < (?, ?)' : '';
    const run = this.listReads(tenant);
    const page = {
      sql: `select ${LINK_COLUMNS} from payment_link l join payment_link_type t on t.id = l.type_id where ${where.sql}${keyset} order by l.date_created desc, l.id desc limit ?`,
      params: [...where.params, ...(after ? [after.createdAt, after.id] : []), limit],
    };
    const countOf = { selectOne: `select 1 from payment_link l where ${where.sql}`, params: where.params };
    // Page and count in one statement (one round trip) when both are wanted.
    if (want.count && limit > 0) {
      const { rows, ...counted } = await pageAndCount(run, { ...page, order: 'p.date_created desc, p.id desc', key: 'id' }, countOf);
      return { rows: rows.map((r) => this.linkOf(r)), ...counted };
    }
    const [rows, counted] = await Promise.all([
      limit > 0 ? run(page.sql, page.params) : Promise.resolve([]),
      want.count ? boundedCount(run, countOf.selectOne, countOf.params) : Promise.resolve(undefined),
    ]);
    return { rows: rows.map((r) => this.linkOf(r)), ...counted };
  }

  /** Where the tenant's link lists are read. */
  private listReads(tenant: Tenant): RunSql {
    return this.reads.for(callerOf(tenant));
  }

  private execute(sql: string, params: unknown[]): Promise<Array<Record<string, any>>> {
    return (this.run ??= sqlRunner(this.orm))(sql, params);
  }

  /** The conditions of `where`, as SQL on `payment_link l`; the filter is checked first (a bad value is `bad_input`). */
  private sqlWhere(tenant: Tenant, criteria: PaymentLinkFilter): { sql: string; params: unknown[] } {
    const filter = linkListFilter(criteria);
    const parts = ['l.environment_id = ?'];
    const params: unknown[] = [tenant.environmentId];
    if (filter.id !== undefined) (parts.push('l.id = ?'), params.push(filter.id));
    if (filter.isActive !== undefined) (parts.push('l.is_active = ?'), params.push(filter.isActive));
    if (filter.currency) (parts.push('l.currency = ?'), params.push(filter.currency));
    if (filter.createdFrom) (parts.push('l.date_created >= ?'), params.push(filter.createdFrom));
    if (filter.createdTo) (parts.push('l.date_created < ?'), params.push(filter.createdTo));
    if (filter.search) {
      const like = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      parts.push('(l.name ilike ? or l.reference ilike ?)');
      params.push(like, like);
    }
    return { sql: parts.join(' and '), params };
  }

  async get(tenant: Tenant, id: number | string): Promise<PaymentLink> {
    const linkId = this.parseId(id);
    const link =
      linkId === undefined ? null : await this.orm.em.fork().findOne(PaymentLink, { id: linkId, environment: tenant.environmentId }, { populate: ['type'] });
    if (!link) throw linkNotFound();
    return link;
  }

  async getByReference(tenant: Tenant, reference: string): Promise<PaymentLink> {
    const link = await this.orm.em.fork().findOne(PaymentLink, { reference, environment: tenant.environmentId }, { populate: ['type'] });
    if (!link) throw linkNotFound();
    return link;
  }

  /** For the public checkout page: a link by its public reference, with its merchant environment. */
  async findPublic(reference: string): Promise<PaymentLink | null> {
    return this.orm.em.fork().findOne(PaymentLink, { reference }, { populate: ['type', 'environment', 'environment.subsidiary'] });
  }

  /** The link's usage rules for an order being paid, under the link's row lock, in the caller's transaction (link-usage.ts). */
  lockForPayment(em: EntityManager, order: OrderBeingPaid, stage: 'attempt' | 'settle', abandonedIfExpiringBy: Date): Promise<PaymentLink> {
    return lockLinkForPayment(em, order, stage, abandonedIfExpiringBy);
  }

  /**
   * Each link's status (link-status.ts), from its paid orders: one query for any number of
   * links (the indexed count per link and status).
   */
  async statuses(links: ReadonlyArray<LinkShape & { id: number }>): Promise<Map<number, PaymentLinkStatus>> {
    const counted = links.filter((l) => l.isActive && hasLimit(l)).map((l) => l.id);
    const usage = new Map<number, { orders: number; customers: number }>();
    if (counted.length > 0) {
      const rows = await this.execute(
        `select payment_link_id as id, count(*)::int as orders, count(distinct customer_id)::int as customers
           from checkout_order where payment_link_id = any(?::int[]) and status_id = any(?::int[]) group by payment_link_id`,
        [counted, PAID_STATUSES],
      );
      for (const r of rows) usage.set(Number(r.id), { orders: Number(r.orders), customers: Number(r.customers) });
    }
    return new Map(links.map((l) => [l.id, linkStatus(l, { ...(usage.get(l.id) ?? { orders: 0, customers: 0 }), mine: 0 })]));
  }

  async status(link: PaymentLink): Promise<PaymentLinkStatus> {
    return (await this.statuses([link])).get(link.id)!;
  }

  async types(): Promise<PaymentLinkType[]> {
    return this.orm.em.fork().find(PaymentLinkType, {}, { orderBy: { id: 'asc' } });
  }

  async frequencies(): Promise<Frequency[]> {
    return this.orm.em.fork().find(Frequency, {}, { orderBy: { id: 'asc' } });
  }

  private parseId(id: number | string): number | undefined {
    const text = String(id).trim();
    if (!/^\d{1,9}$/.test(text)) return undefined;
    return Number(text);
  }
}
