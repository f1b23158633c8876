import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlRunner, type PreparedStatement, type RunSql } from '../db/sql';
import { EntityRowMapper } from '../db/row-mapper';
import { PaymentLink } from '../links/payment-link.entity';
import { PaymentLinkType } from '../links/payment-link-type.entity';
import { Frequency } from '../links/frequency.entity';

/**
 * What an order create on a payment link reads before it writes, each one prepared statement
 * outside any transaction (the order is then written by the create's own statement): the link
 * with its type, for the link's rules (links/link-usage.ts), and a subscription's frequency.
 * What they return has the entities' shape (EntityRowMapper), as OrderQueries' rows do.
 */
export class OrderLinkReads {
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
      name: 'pgw_order_link_v1',
      text: `select ${this.link.selectList}, ${this.linkType.selectList}
               from payment_link l join payment_link_type t on t.id = l.type_id
              where l.id = $1::int and l.environment_id = $2::int`,
    };
    this.frequencyStatement = {
      name: 'pgw_order_frequency_v1',
      text: `select ${this.frequency.selectList} from frequency f where f.id = $1::int and f.is_active`,
    };
  }

  /** The environment's link `id` with its type; null when the environment has no such link. */
  async linkOf(environmentId: number, id: number): Promise<PaymentLink | null> {
    const [row] = await this.run(this.linkStatement, [id, environmentId]);
    if (!row) return null;
    const link = this.link.map(row)!;
    link.type = this.linkType.map(row)!;
    return link;
  }

  /** An active charge frequency; null when `id` is none or no longer offered. */
  async activeFrequency(id: number): Promise<Frequency | null> {
    const [row] = await this.run(this.frequencyStatement, [id]);
    return row ? this.frequency.map(row) : null;
  }
}
