import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { notFound, requiredField, unsupported, validationError } from '../shared/errors';
import { currencyOf, parseAmount } from '../shared/money';
import { randomReference } from '../shared/random';
import { isHttpUrl } from '../shared/validation';
import { trimmedText } from '../shared/input';
import { isQueryableDate } from '../shared/time';
import { badInput, currencyFilter, idInRange, searchFilter } from '../shared/list-filter';
import type { Tenant } from '../merchants/tenant';
import { Subsidiary } from '../merchants/subsidiary.entity';
import { AppEnvironment } from '../merchants/app-environment.entity';
import { PaymentLink, type AuthOption } from './payment-link.entity';
import { PaymentLinkType } from './payment-link-type.entity';
import { Frequency } from './frequency.entity';
import { boundedCount, dateParser, sqlRunner, type Counted, type DateOf, type RunSql } from '../orders/order-lists';

/** Link input as both adapters hand it over; every rule about it lives here. */
export interface PaymentLinkInput {
  name?: string | null;
  description?: string | null;
  paymentType?: string | null;
  currency?: string | null;
  authOption?: string | null;
  amount?: string | number | null;
  mobile?: string | null;
  backgroundImage?: string | null;
  website?: string | null;
  limit?: string | number | null;
}

export const PAYMENT_LINK_NOT_FOUND = 'payment link not found';
const linkNotFound = () => notFound(PAYMENT_LINK_NOT_FOUND, '02');

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

export const LINK_COLUMNS = `l.id, l.environment_id, l.name, l.description, l.reference, l.amount, l.currency, l.auth_option, l.mobile, l.background_image,
  l.website, l.logo, l.customer_limit, l.is_active, l.date_created, l.date_updated, t.id as t_id, t.code as t_code, t.payment_link_name as t_name`;

/** A link row as the plain object the views read (the fields of `PaymentLink` they use). */
function linkOf(r: Record<string, any>, date: DateOf): PaymentLink {
  return {
    id: r.id,
    environment: r.environment_id,
    name: r.name,
    description: r.description,
    reference: r.reference,
    amount: r.amount,
    currency: r.currency,
    authOption: r.auth_option,
    mobile: r.mobile,
    backgroundImage: r.background_image,
    website: r.website,
    logo: r.logo,
    limit: r.customer_limit,
    isActive: r.is_active,
    dateCreated: date(r.date_created),
    dateUpdated: date(r.date_updated),
    type: { id: r.t_id, code: r.t_code, paymentLinkName: r.t_name },
  } as unknown as PaymentLink;
}

export class PaymentLinkService {
  private readonly date: DateOf;
  private run: RunSql | undefined;

  constructor(
    private readonly orm: MikroORM,
    private readonly publicUrl: string,
  ) {
    this.date = dateParser(orm);
  }

  paymentLinkUrl(link: PaymentLink): string {
    return `${this.publicUrl}/pay/${link.reference}`;
  }

  async create(tenant: Tenant, input: PaymentLinkInput): Promise<{ link: PaymentLink; subsidiary: Subsidiary }> {
    const em = this.orm.em.fork();
    const fields = await this.validate(input, { creating: true });
    const link = em.create(PaymentLink, {
      environment: em.getReference(AppEnvironment, tenant.environmentId),
      type: em.getReference(PaymentLinkType, fields.typeId),
      name: fields.name,
      description: fields.description,
      reference: randomReference('PL', 16),
      amount: fields.amount,
      currency: fields.currency!,
      authOption: fields.authOption ?? 'AUTH',
      mobile: fields.mobile,
      backgroundImage: fields.backgroundImage,
      website: fields.website,
      limit: fields.limit,
      isActive: true,
    });
    await em.flush();
    await em.populate(link, ['type']);
    const subsidiary = await em.findOneOrFail(Subsidiary, { id: tenant.subsidiaryId });
    return { link, subsidiary };
  }

  /** Changes fields only; state and currency stay as they are. */
  async edit(tenant: Tenant, id: number | string, input: PaymentLinkInput): Promise<{ link: PaymentLink; subsidiary: Subsidiary }> {
    const em = this.orm.em.fork();
    const linkId = this.parseId(id);
    const fields = await this.validate(input, { creating: false });
    const link = linkId === undefined ? null : await em.findOne(PaymentLink, { id: linkId, environment: tenant.environmentId }, { populate: ['type'] });
    if (!link) throw linkNotFound();
    link.name = fields.name;
    link.description = fields.description;
    link.type = em.getReference(PaymentLinkType, fields.typeId);
    link.amount = fields.amount;
    if (fields.authOption) link.authOption = fields.authOption;
    link.mobile = fields.mobile;
    link.backgroundImage = fields.backgroundImage;
    link.website = fields.website;
    link.limit = fields.limit;
    await em.flush();
    await em.populate(link, ['type'], { refresh: true });
    const subsidiary = await em.findOneOrFail(Subsidiary, { id: tenant.subsidiaryId });
    return { link, subsidiary };
  }

  /** activate / disable: idempotent; unknown ids (of this tenant) are "payment link not found". */
  async setActive(tenant: Tenant, id: number | string, isActive: boolean): Promise<PaymentLink> {
    const em = this.orm.em.fork();
    const linkId = this.parseId(id);
    const link = linkId === undefined ? null : await em.findOne(PaymentLink, { id: linkId, environment: tenant.environmentId }, { populate: ['type'] });
    if (!link) throw linkNotFound();
    link.isActive = isActive;
    await em.flush();
    return link;
  }

  /** The tenant's links, newest first: one query, no entity hydration (REST links/all reads thousands). */
  async list(tenant: Tenant, filter: PaymentLinkFilter = {}): Promise<PaymentLink[]> {
    const where = this.sqlWhere(tenant, filter);
    const rows = await this.execute(
      `select ${LINK_COLUMNS} from payment_link l join payment_link_type t on t.id = l.type_id where ${where.sql} order by l.date_created desc, l.id desc`,
      where.params,
    );
    return rows.map((r) => linkOf(r, this.date));
  }

  /**
   * REST links/all: the tenant's links, newest first, as the JSON text of the list (the list
   * style of `paymentLinkView`, byte for byte: its field order, money as JSON numbers without
   * trailing zeros, timestamps as ISO 8601 UTC with milliseconds and no zone), built by
   * PostgreSQL in the one query that reads them. `null` when `id` is given and not the tenant's.
   */
  async listJson(tenant: Tenant, filter: { id?: number } = {}): Promise<string | null> {
    const where = this.sqlWhere(tenant, filter);
    const j = (sql: string) => `coalesce(to_json(${sql})::text, 'null')`;
    const [row] = await this.execute(
      `select count(*)::int as n, '[' || coalesce(string_agg(
         '{"id":' || l.id || ',"name":' || ${j('l.name')} || ',"paymentType":' || ${j('t.payment_link_name')} || ',"logo":' || ${j('l.logo')} ||
         ',"amount":' || coalesce(trim_scale(l.amount)::text, 'null') ||
         ',"dateCreated":"' || to_char(l.date_created at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') || '"' ||
         ',"reference":' || ${j('l.reference')} || ',"createdBy":null,"creatorEmail":null,"isActive":' || l.is_active::text ||
         ',"currency":' || ${j('l.currency')} || ',"limit":' || coalesce(l.customer_limit::text, 'null') ||
         ',"paymentLinkUrl":' || to_json(?::text || '/pay/' || l.reference)::text || ',"appEnvironmentId":' || l.environment_id ||
         ',"paymentLinkType":null,"paymentLinkCode":null,"description":' || ${j('l.description')} || '}',
         ',' order by l.date_created desc, l.id desc), '') || ']' as json
         from payment_link l join payment_link_type t on t.id = l.type_id where ${where.sql}`,
      [this.publicUrl, ...where.params],
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
    const [rows, counted] = await Promise.all([
      limit > 0
        ? this.execute(
            `select ${LINK_COLUMNS} from payment_link l join payment_link_type t on t.id = l.type_id where ${where.sql}${keyset} order by l.date_created desc, l.id desc limit ?`,
            [...where.params, ...(after ? [after.createdAt, after.id] : []), limit],
          )
        : Promise.resolve([]),
      want.count
        ? boundedCount((sql, params) => this.execute(sql, params), `select 1 from payment_link l where ${where.sql}`, where.params)
        : Promise.resolve(undefined),
    ]);
    return { rows: rows.map((r) => linkOf(r, this.date)), ...counted };
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

  where(tenant: Tenant, criteria: PaymentLinkFilter) {
    const filter = linkListFilter(criteria);
    const where: Record<string, unknown> = { environment: tenant.environmentId };
    if (filter.id !== undefined) where.id = filter.id;
    if (filter.isActive !== undefined) where.isActive = filter.isActive;
    if (filter.currency) where.currency = filter.currency;
    if (filter.createdFrom || filter.createdTo) {
      where.dateCreated = { ...(filter.createdFrom ? { $gte: filter.createdFrom } : {}), ...(filter.createdTo ? { $lt: filter.createdTo } : {}) };
    }
    if (filter.search) {
      const like = `%${filter.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.$or = [{ name: { $ilike: like } }, { reference: { $ilike: like } }];
    }
    return where;
  }

  /**
   * How far a link is used, for its rules (single charge, Limit of paying customers): the
   * link's orders in `statusIds` other than `excludeOrderId`, how many distinct customers they
   * have, and how many are `customerId`'s. Callers count paid orders and payments in progress,
   * never Initiated ones (an order nobody managed to pay, e.g. a refused card on the hosted
   * page, uses nothing up). Runs in the caller's transaction, under its lock of the link.
   */
  async usage(
    em: EntityManager,
    linkId: number,
    options: { statusIds: readonly number[]; excludeOrderId: number; customerId: number | null },
  ): Promise<{ orders: number; customers: number; mine: number }> {
    const statusIds = options.statusIds.map((id) => Number(id)).filter(Number.isInteger);
    const rows: Array<{ orders: string; customers: string; mine: string }> = await em.getConnection().execute(
      `select count(*) as orders, count(distinct customer_id) as customers,
              count(*) filter (where customer_id = ?) as mine
         from checkout_order where payment_link_id = ? and status_id in (${statusIds.join(',')}) and id <> ?`,
      [options.customerId ?? 0, linkId, options.excludeOrderId],
      'all',
      em.getTransactionContext(),
    );
    const row = rows[0]!;
    return { orders: Number(row.orders), customers: Number(row.customers), mine: Number(row.mine) };
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

  private async validate(input: PaymentLinkInput, { creating }: { creating: boolean }) {
    const text = trimmedText;
    const name = text(input.name);
    if (!name) throw requiredField('Name');
    if (name.length > 200) throw validationError('The Name field must be at most 200 characters.');
    const description = text(input.description);
    if (!description) throw requiredField('Description');
    if (description.length > 2000) throw validationError('The Description field must be at most 2000 characters.');

    const typeCode = text(input.paymentType)?.toUpperCase();
    if (!typeCode) throw requiredField('PaymentType');
    const type = await this.orm.em.fork().findOne(PaymentLinkType, { code: typeCode, status: true });
    if (!type) throw unsupported('PaymentType');

    let currency: string | null = null;
    if (creating) {
      currency = (text(input.currency) ?? 'NGN').toUpperCase();
      if (!currencyOf(currency)) throw unsupported('Currency');
    }

    const authText = text(input.authOption)?.toUpperCase();
    if (creating && !authText) throw requiredField('AuthOption');
    if (authText && authText !== 'AUTH' && authText !== 'NOAUTH') throw unsupported('AuthOption');

    let amount: string | null = null;
    if (input.amount !== null && input.amount !== undefined && String(input.amount).trim() !== '') {
      const parsed = parseAmount(input.amount);
      if (typeof parsed === 'string') throw amountError(parsed);
      amount = parsed.toFixed(2);
    }

    let limit: number | null = null;
    if (input.limit !== null && input.limit !== undefined && String(input.limit).trim() !== '') {
      const t = String(input.limit).trim();
      if (!/^\d{1,9}$/.test(t) || Number(t) < 1) throw validationError('The Limit field must be a whole number of at least 1.');
      limit = Number(t);
    }

    const mobile = text(input.mobile);
    if (mobile && !/^\+?[0-9 ()-]{6,20}$/.test(mobile)) throw validationError('The Mobile field is not a valid phone number.');
    const backgroundImage = text(input.backgroundImage);
    if (backgroundImage && !isHttpUrl(backgroundImage)) throw validationError('The BackgroundImage field must be an http or https URL.');
    const website = text(input.website);
    if (website && !isHttpUrl(website)) throw validationError('The Website field must be an http or https URL.');

    return { name, description, typeId: type.id, currency, authOption: authText as AuthOption | undefined, amount, limit, mobile, backgroundImage, website };
  }
}

export function amountError(problem: 'invalid' | 'not_positive' | 'too_large' | 'too_precise', field = 'Amount') {
  switch (problem) {
    case 'not_positive':
      return validationError(`The ${field} field must be greater than zero.`);
    case 'too_large':
      return validationError(`The ${field} field must be at most 999999999999.99.`);
    case 'too_precise':
      return validationError(`The ${field} field must have at most 2 decimal places.`);
    default:
      return validationError(`The ${field} field must be a number.`);
  }
}
