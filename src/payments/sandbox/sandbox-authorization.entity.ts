import { Entity, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * The sandbox acquirer's own memory of an authorization: the outcome it decided for the
 * card, kept under an opaque token (never the card number), as a real acquirer keeps its
 * state on its side.
 */
@Entity({ tableName: 'sandbox_authorization' })
export class SandboxAuthorization {
  [OptionalProps]?: 'createdAt' | 'state';

  @PrimaryKey({ type: 'string', length: 60 })
  token!: string;

  @Property({ type: 'string', length: 10 })
  kind!: 'card' | 'paypal';

  /** What the issuer will answer once the cardholder is authenticated. */
  @Property({ type: 'string', length: 10 })
  outcomeCode!: string;

  @Property({ type: 'string', length: 100 })
  outcomeMessage!: string;

  @Property({ type: 'string', length: 100 })
  issuer!: string;

  @Property({ type: 'string', length: 20, default: 'pending' })
  state: 'pending' | 'completed' = 'pending';

  @Property({ type: 'datetime', columnType: 'timestamptz(6)', defaultRaw: 'now()' })
  createdAt: Date = new Date();
}
