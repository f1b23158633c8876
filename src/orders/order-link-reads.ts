import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlRunner, type PreparedStatement, type RunSql } from '../db/sql';
import { EntityRowMapper } from '../db/row-mapper';
import { PaymentLink } from '../links/payment-link.entity';
import { PaymentLinkType } from '../links/payment-link-type.entity';
import { Frequency } from '../links/frequency.entity';

/** A link as it was read, with the row version (PostgreSQL's `xmin`) the order's write checks it is still at. */
export interface LinkAsRead {
  link: PaymentLink;
  version: string;
  readAt: number;
}

/** How many links an instance keeps as read (the least recently used beyond it are dropped). */
const LINKS_KEPT = 10_000;
/** How long a link is kept before it is read again anyway (a row version is a 32-bit transaction id, which wraps around). */
const LINK_KEPT_MS = 5 * 60_000;

/**
 * What an order create on a payment link reads before it writes, each one prepared statement
 * outside any transaction (the order is then written by the create's own statement): the link
 * with its type, for the link's rules (links/link-usage.ts), and a subscription's frequency.
 * What they return has the entities' shape (EntityRowMapper), as OrderQueries' rows do.
 *
 * Links are kept as read, with their row version: the order's write checks the version in the
 * same statement and writes nothing when the link changed since, so a kept link is never
 * trusted stale (the create then reads it again, as it does before it refuses an order by a kept
 * link's rules). Kept links are shared: frozen.
 */
export class OrderLinkReads {
  private readonly kept = new Map<string, LinkAsRead>();
  private readonly link: EntityRowMapper<PaymentLink>;
  private readonly linkType: EntityRowMapper<PaymentLinkType>;
  private readonly frequency: EntityRowMapper<Frequency>;
  private readonly linkStatement: PreparedStatement;
  private readonly frequencyStatement: PreparedStatement;
  private readonly run: RunSql;

  constructor(orm: MikroORM) {
    this.run = sqlRunner(orm);
    this.link = new EntityRowMapper(orm, PaymentLink, 'l');
    this.linkType = new EntityRowMapper(orm, PaymentLinkType, 't');
    this.frequency = new EntityRowMapper(orm, Frequency, 'f');
    this.linkStatement = {
      name: 'pgw_order_link_v2',
      text: `select l.xmin::text as l_version, ${this.link.selectList}, ${this.linkType.selectList}
               from payment_link l join payment_link_type t on t.id = l.type_id
              where l.id = $1::int and l.environment_id = $2::int`,
    };
    this.frequencyStatement = {
      name: 'pgw_order_frequency_v1',
      text: `select ${this.frequency.selectList} from frequency f where f.id = $1::int and f.is_active`,
    };
  }

  /**
   * The environment's link `id` with its type and row version, as kept when it was last read
   * (unless `fresh`); null when the environment has no such link.
   */
  async linkOf(environmentId: number, id: number, options: { fresh?: boolean } = {}): Promise<LinkAsRead | null> {
    const key = `${environmentId}:${id}`;
    const kept = this.kept.get(key);
    if (kept && !options.fresh && Date.now() - kept.readAt < LINK_KEPT_MS) {
      this.kept.delete(key); // most recently used last
      this.kept.set(key, kept);
      return kept;
    }
    const [row] = await this.run(this.linkStatement, [id, environmentId]);
    if (!row) {
      this.kept.delete(key);
      return null;
    }
    const link = this.link.map(row)!;
    link.type = Object.freeze(this.linkType.map(row)!);
    const read: LinkAsRead = Object.freeze({ link: Object.freeze(link), version: row.l_version as string, readAt: Date.now() });
    this.kept.delete(key);
    this.kept.set(key, read);
    if (this.kept.size > LINKS_KEPT) this.kept.delete(this.kept.keys().next().value!);
    return read;
  }

  /** An active charge frequency; null when `id` is none or no longer offered. */
  async activeFrequency(id: number): Promise<Frequency | null> {
    const [row] = await this.run(this.frequencyStatement, [id]);
    return row ? this.frequency.map(row) : null;
  }
}
