import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { requiredField, UNPAIRED_SURROGATE_TEXT, unstorableValue, UNSTORABLE_TEXT, validationError } from '../shared/errors';
import { callerOf, type Tenant } from '../merchants/tenant';
import { holderOf, mayDo } from '../merchants/authorization';
import type { ReadRouting } from '../db/read-routing';
import { EntityRowMapper } from '../db/row-mapper';
import { Order } from '../orders/order.entity';
import { ORDER_CREATED_EVENT, orderNotFound } from '../orders/order-status';
import { TimelineEvent, type TimelineSource } from './timeline-event.entity';
import { nestedDeeperThan } from '../shared/nesting';

/** Deeper metadata is refused before it is serialised: JSON of hundreds of levels exhausts stacks. */
export const MAX_METADATA_DEPTH = 32;

/** System events the engine records; merchants' tracked events carry their own names. */
export const TimelineEvents = {
  created: ORDER_CREATED_EVENT,
  paymentInitiated: 'payment.initiated',
  authenticationPassed: 'authentication.passed',
  authenticationFailed: 'authentication.failed',
  settled: 'order.settled',
  failed: 'order.failed',
  /** An approved payment of an order captured later: the money is held (docs/capture.md). */
  authorized: 'order.authorized',
  captured: 'order.captured',
  /** Released by the merchant or because it was not captured in time. */
  voided: 'order.voided',
  /** The processor refused a capture or a void: the order stays Authorized. */
  authorizationActionFailed: 'order.authorization_action_failed',
  /** The fee was recomputed for the payment option actually used (metadata: from, to). */
  feeChanged: 'order.fee_changed',
  /** An attempt interrupted between the processor call and its settlement was settled from the processor's record. */
  reconciled: 'payment.reconciled',
  /** The processor approved after the link's rules changed (deactivated, limit lowered): money moved, so the approval stands. */
  linkRuleOverridden: 'payment.link_rule_overridden',
  /** A subscription's renewal was not charged because its payment link is disabled (on the subscription's first order). */
  renewalSkipped: 'subscription.renewal_skipped',
  /** A subscription was ended by its payment link's rules (on the subscription's first order). */
  subscriptionStopped: 'subscription.stopped',
  /** A renewal approved when the subscription's number of payments was already made: not counted, to be refunded (on the renewal's order). */
  chargedBeyondTerms: 'subscription.charged_beyond_terms',
  /** A refund was asked for and recorded PENDING (metadata: refundId, amount, currency, reason). */
  refundRequested: 'refund.requested',
  /** The processor gave the refund's money back (metadata: refundId, amount, currency). */
  refundSucceeded: 'refund.succeeded',
  /** The processor refused the refund (metadata: refundId, failureReason). */
  refundFailed: 'refund.failed',
  /** The processor reported a dispute of the order (metadata: disputeId, amount, currency, reason, evidenceDueBy). */
  disputeOpened: 'dispute.opened',
  /** The merchant answered a dispute with evidence (metadata: disputeId). */
  disputeEvidenceSubmitted: 'dispute.evidence_submitted',
  /** The merchant gave a dispute up (metadata: disputeId, amount, currency). */
  disputeAccepted: 'dispute.accepted',
  /** The processor decided a dispute for the merchant (metadata: disputeId). */
  disputeWon: 'dispute.won',
  /** The processor decided a dispute against the merchant, or its deadline passed unanswered (metadata: disputeId, amount, currency, expired). */
  disputeLost: 'dispute.lost',
  webhookDelivered: 'webhook.delivered',
  webhookFailed: 'webhook.failed',
} as const;

export interface TrackEventInput {
  orderReference?: string | null;
  event?: string | null;
  description?: string | null;
  metadata?: unknown;
}

export class TimelineService {
  private readonly entry: EntityRowMapper<TimelineEvent>;

  /** `reads`: where timelines are read (the read replica, unless the caller wrote lately). */
  constructor(
    private readonly orm: MikroORM,
    private readonly reads: ReadRouting,
  ) {
    this.entry = new EntityRowMapper(orm, TimelineEvent, 'e');
  }

  /** Appends an entry inside the caller's transaction. */
  record(
    em: EntityManager,
    order: Order,
    event: string,
    source: TimelineSource,
    description: string | null = null,
    metadata: Record<string, unknown> | null = null,
  ): TimelineEvent {
    return em.create(TimelineEvent, { order, event, source, description, metadata });
  }

  /** A merchant's own event on one of its orders (REST order/event/track). */
  async track(tenant: Tenant, input: TrackEventInput): Promise<TimelineEvent> {
    const reference = typeof input.orderReference === 'string' ? input.orderReference.trim() : '';
    if (!reference) throw requiredField('OrderReference');
    const event = typeof input.event === 'string' ? input.event.trim() : '';
    if (!event) throw requiredField('Event');
    if (event.length > 100) throw validationError('The Event field must be at most 100 characters.');
    const description = typeof input.description === 'string' && input.description.trim() ? input.description.trim() : null;
    if (description && description.length > 2000) throw validationError('The Description field must be at most 2000 characters.');
    let metadata: Record<string, unknown> | null = null;
    if (input.metadata !== undefined && input.metadata !== null) {
      if (typeof input.metadata !== 'object' || Array.isArray(input.metadata)) throw validationError('The Metadata field must be an object.');
      if (nestedDeeperThan(input.metadata, MAX_METADATA_DEPTH))
        throw validationError(`The Metadata field must be nested at most ${MAX_METADATA_DEPTH} levels deep.`);
      if (JSON.stringify(input.metadata).length > 8192) throw validationError('The Metadata field must be at most 8 KiB of JSON.');
      // Stored as JSON: PostgreSQL refuses a NUL and half a surrogate pair there.
      const unstorable = unstorableValue(input.metadata);
      if (unstorable) throw validationError(unstorable === 'nul' ? UNSTORABLE_TEXT : UNPAIRED_SURROGATE_TEXT);
      metadata = input.metadata as Record<string, unknown>;
    }
    const em = this.orm.em.fork();
    const order = await em.findOne(Order, { environment: tenant.environmentId, reference });
    if (!order) throw orderNotFound();
    const entry = this.record(em, order, event, 'merchant', description, metadata);
    await em.flush();
    return entry;
  }

  /**
   * The order's timeline, oldest first, as the caller may see it: a webhook entry names the
   * webhook URL whole only to those who may manage webhooks (the `developers` class); anyone
   * else reads its origin, scheme://host[:port] (a path or query may hold the merchant's token).
   */
  async list(tenant: Tenant, reference: string): Promise<TimelineEvent[]> {
    // One statement: no row is no order; a row without an entry is an order with an empty timeline.
    const rows = await this.reads.for(callerOf(tenant))(
      `select ${this.entry.selectList} from checkout_order o left join timeline_event e on e.order_id = o.id
        where o.environment_id = ? and o.reference = ? order by e.id`,
      [tenant.environmentId, reference],
    );
    if (rows.length === 0) throw orderNotFound();
    const entries = rows.map((r) => this.entry.map(r)).filter((e): e is TimelineEvent => e !== null);
    return mayDo(holderOf(tenant), 'developers') ? entries : entries.map(withWebhookOriginOnly);
  }
}

const WEBHOOK_ENTRIES: readonly string[] = [TimelineEvents.webhookDelivered, TimelineEvents.webhookFailed];

/** A webhook entry with its URL cut to the origin, in the description and the metadata; other entries as they are. */
function withWebhookOriginOnly(entry: TimelineEvent): TimelineEvent {
  const url = entry.metadata?.url;
  if (entry.source !== 'system' || !WEBHOOK_ENTRIES.includes(entry.event) || typeof url !== 'string') return entry;
  const origin = originOf(url);
  return { ...entry, description: entry.description?.split(url).join(origin) ?? null, metadata: { ...entry.metadata, url: origin } };
}

/** scheme://host[:port] of a URL, without user information; a placeholder when it has none. */
function originOf(url: string): string {
  try {
    const origin = new URL(url).origin;
    if (origin !== 'null') return origin;
  } catch {
    // Not a URL: nothing of it is shown.
  }
  return 'the webhook URL';
}
