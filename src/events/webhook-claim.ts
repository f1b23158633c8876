import type { EnvironmentMode } from '../merchants/app-environment.entity';

/** A delivery a worker holds the lease of. */
export interface ClaimedDelivery {
  id: string;
  url: string;
  attemptCount: number;
  /** When the lease ends, on the database's clock, as stored (to the millisecond): recording the attempt requires still holding it. */
  lease: Date;
  eventId: string;
  orderId: number | null;
  /** The order's reference (logs name the order by it); null for an event without an order. */
  orderReference: string | null;
  body: string;
  subsidiaryId: number;
  /** The event's environment: its secret signs the delivery. */
  mode: EnvironmentMode;
  /** From when it was due to when it was claimed. */
  lagMs: number;
}

/** Serialises claims across instances, so the per-URL limit holds exactly (claims take milliseconds). */
const CLAIM_LOCK_KEY = 7_305_114_002;

/** A pooled connection of the pg driver, as MikroORM's pool hands it out. */
export interface ClaimConnection {
  query(text: string): Promise<unknown>;
}

/**
 * Takes the lease of up to `limits.max` due deliveries, committed before returning: at most
 * `endpointConcurrency` in flight per destination and `merchantConcurrency` per merchant,
 * counting the leases other workers hold; rows another worker is claiming are skipped
 * (FOR UPDATE SKIP LOCKED).
 *
 * Merchants sharing a destination (a common receiving service) take turns there, round robin:
 * a merchant's k-th oldest due delivery to it, after the n it already has in flight there, has
 * turn k + n, and the destination's slots go by turn, then oldest due first. So one merchant's
 * backlog to a shared destination never holds back another merchant's oldest delivery there.
 *
 * One message, one round trip: the claim lock, then the claim, sent together as one simple
 * query, which PostgreSQL runs as one transaction (rolled back whole on an error), each
 * statement with a fresh snapshot, so the claim sees every lease committed before the lock was
 * granted. The lock is held only while the server runs the claim, never across a round trip
 * to a busy instance (which, with BEGIN … COMMIT, kept every other instance's claims waiting).
 * A simple query takes no parameters: the values (integers and instants made here) are written
 * in as literals.
 *
 * Leases are taken and compared on the database's clock, read once after the claim lock is
 * granted (a wait for the lock does not shorten the lease), as the
 * email outbox's are, never on an instance's: an instance whose clock runs ahead would otherwise
 * see another's lease as ended and send the same delivery while the other is still sending it.
 * When a delivery is due (`now`, the instance's clock) only decides when it is sent, not by whom.
 */
export async function claimDueDeliveries(
  connection: ClaimConnection,
  now: Date,
  leaseMs: number,
  limits: { endpointConcurrency: number; merchantConcurrency: number; max: number },
): Promise<ClaimedDelivery[]> {
  const values = [now, limits.endpointConcurrency, limits.merchantConcurrency, limits.max, leaseMs];
  let n = 0;
  const claim = CLAIM_SQL.replace(/\?/g, () => literal(values[n++]));
  const results = (await connection.query(`select pg_advisory_xact_lock(${CLAIM_LOCK_KEY}); ${claim}`)) as Array<{ rows: unknown[] }>;
  const rows: Array<{
    id: string | number;
    url: string;
    attempt_count: number;
    event_id: string;
    order_id: number | null;
    order_reference: string | null;
    body: string;
    subsidiary_id: number;
    mode: EnvironmentMode;
    next_attempt_at: Date | string;
    locked_until: Date | string;
  }> = results[1]!.rows as never;
  return rows.map((r) => ({
    id: String(r.id),
    url: r.url,
    attemptCount: r.attempt_count,
    lease: new Date(r.locked_until),
    eventId: r.event_id,
    orderId: r.order_id,
    orderReference: r.order_reference,
    body: r.body,
    subsidiaryId: r.subsidiary_id,
    mode: r.mode,
    lagMs: Math.max(0, now.getTime() - new Date(r.next_attempt_at).getTime()),
  }));
}

/** An integer or an instant as an SQL literal (the instant as the pg driver would send it: ISO 8601, UTC). */
function literal(value: unknown): string {
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (value instanceof Date && !Number.isNaN(value.getTime())) return `'${value.toISOString()}'::timestamptz`;
  throw new Error(`webhook claim: ${String(value)} is not an integer or an instant`);
}

const CLAIM_SQL = `with clock as materialized (select clock_timestamp() as now), leased as (
         select d.destination, env.subsidiary_id
           from webhook_delivery d
           join outbox_event e on e.id = d.event_id
           join app_environment env on env.id = e.environment_id
          where d.state = 'pending' and d.locked_until > (select now from clock)
       ), busy_destination as (
         select destination, count(*) as n from leased group by destination
       ), busy_merchant as (
         select subsidiary_id, count(*) as n from leased group by subsidiary_id
       ), busy_pair as (
         select destination, subsidiary_id, count(*) as n from leased group by destination, subsidiary_id
       ), due as (
         select d.id, d.next_attempt_at, d.destination, env.subsidiary_id
           from webhook_delivery d
           join outbox_event e on e.id = d.event_id
           join app_environment env on env.id = e.environment_id
          where d.state = 'pending' and d.next_attempt_at <= ? and (d.locked_until is null or d.locked_until <= (select now from clock))
       ), turns as (
         select due.*,
                row_number() over (partition by due.destination, due.subsidiary_id order by due.next_attempt_at, due.id) + coalesce(p.n, 0) as turn
           from due left join busy_pair p on p.destination = due.destination and p.subsidiary_id = due.subsidiary_id
       ), per_destination as (
         select t.*, row_number() over (partition by t.destination order by t.turn, t.next_attempt_at, t.id) + coalesce(b.n, 0) as slot
           from turns t left join busy_destination b on b.destination = t.destination
       ), per_merchant as (
         select p.id, p.next_attempt_at,
                row_number() over (partition by p.subsidiary_id order by p.next_attempt_at, p.id) + coalesce(b.n, 0) as slot
           from per_destination p left join busy_merchant b on b.subsidiary_id = p.subsidiary_id
          where p.slot <= ?
       ), picked as (
         select d.id from webhook_delivery d
          where d.id in (select id from per_merchant where slot <= ? order by slot, next_attempt_at, id limit ?)
            and d.state = 'pending' and (d.locked_until is null or d.locked_until <= (select now from clock))
          for update of d skip locked
       )
       update webhook_delivery d set locked_until = date_trunc('milliseconds', (select now from clock)) + ? * interval '1 millisecond'
         from picked, outbox_event e, app_environment env
        where d.id = picked.id and e.id = d.event_id and env.id = e.environment_id
       returning d.id, d.url, d.attempt_count, e.id as event_id, e.order_id,
                 (select o.reference from checkout_order o where o.id = e.order_id) as order_reference, e.payload::text as body, env.subsidiary_id, env.mode, d.next_attempt_at, d.locked_until`;
