import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** Seconds: from a fast health check to a slow processor call. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds a webhook waited past its due time: from immediate to hours behind. */
const LAG_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 14_400];

/** Names every metric of the service carries (the process and Node.js defaults keep theirs). */
export const METRIC_PREFIX = 'gateway_';

/**
 * The service's metrics, in a registry of their own (one per server: tests run several in one
 * process). Counters and histograms are updated as things happen; gauges that need the
 * database or other state are read when scraped, through `addCollector`.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: `${METRIC_PREFIX}http_requests_total`,
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: `${METRIC_PREFIX}http_request_duration_seconds`,
    help: 'Time from receiving an HTTP request to sending its answer, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly graphqlOperations = new Counter({
    name: `${METRIC_PREFIX}graphql_operations_total`,
    help: 'GraphQL operations, by transport (http, websocket), operation type, operation name and outcome (ok, error).',
    labelNames: ['transport', 'operation_type', 'operation_name', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly graphqlDuration = new Histogram({
    name: `${METRIC_PREFIX}graphql_operation_duration_seconds`,
    help: 'Time to answer a GraphQL query or mutation (HTTP and WebSocket), by transport, operation type and name.',
    labelNames: ['transport', 'operation_type', 'operation_name'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly paymentOutcomes = new Counter({
    name: `${METRIC_PREFIX}payment_outcomes_total`,
    help: 'Payment attempts reaching a status (pending, successful, failed), by method (card, paypal, none) and response code.',
    labelNames: ['method', 'status', 'code'] as const,
    registers: [this.registry],
  });

  readonly moneyPathConflicts = new Counter({
    name: `${METRIC_PREFIX}money_path_guard_conflicts_total`,
    help: "Money-path writes (attempt, settlement, resume, capture_void: a capture's or void's settlement, capture_void_claim: its claim) that found a row changed since their read, wrote nothing and were decided again under locks.",
    labelNames: ['step'] as const,
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: `${METRIC_PREFIX}webhook_attempts_total`,
    help: 'Webhook HTTP attempts made by this instance, by result (delivered, retry, dead, stale).',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });

  readonly webhookFailures = new Counter({
    name: `${METRIC_PREFIX}webhook_failures_total`,
    help: 'Webhook attempts that did not deliver, by reason (status: the receiver answered non-2xx; no_response: timeout, refused, unreachable).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly webhookAttemptDuration = new Histogram({
    name: `${METRIC_PREFIX}webhook_attempt_duration_seconds`,
    help: 'Time a webhook receiver took to answer (or to fail).',
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });

  readonly webhookLag = new Histogram({
    name: `${METRIC_PREFIX}webhook_delivery_lag_seconds`,
    help: 'How late webhook attempts started: from when each was due to when a worker claimed it.',
    buckets: LAG_BUCKETS,
    registers: [this.registry],
  });

  readonly rateLimitStoreErrors = new Counter({
    name: `${METRIC_PREFIX}rate_limit_store_errors_total`,
    help: 'Calls to the rate-limit counters (REDIS_URL) that failed, by what became of the request: allowed (general limits fail open) or refused (card attempts fail closed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly listReads = new Counter({
    name: `${METRIC_PREFIX}list_read_statements_total`,
    help: 'Statements of list reads (lists, dashboard summary, timelines, audit log, webhook deliveries) with DATABASE_READ_URL set, by the server that ran them (replica, primary) and why (replica; own_write: the caller wrote lately; replica_unavailable: the replica failed or rests after a failure; writers_unavailable: the record of writers shared through Redis could not be asked).',
    labelNames: ['server', 'reason'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
  }

  /** A gauge whose value is read when scraped (the callback may be async and should be cheap). */
  addGauge<L extends string>(name: string, help: string, labelNames: readonly L[], collect: (gauge: Gauge<L>) => void | Promise<void>): Gauge<L> {
    return new Gauge<L>({
      name: `${METRIC_PREFIX}${name}`,
      help,
      labelNames,
      registers: [this.registry],
      async collect() {
        await collect(this);
      },
    });
  }

  /** The exposition text (Prometheus text format). */
  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/**
 * Operation names come from clients: only plain GraphQL names, and at most `max` distinct
 * ones per instance, become label values; the rest are counted as `other` (an attacker cannot
 * grow the series without bound).
 */
export class LabelGuard {
  private readonly seen = new Set<string>();
  constructor(private readonly max = 200) {}

  label(name: string | null | undefined): string {
    if (!name) return 'anonymous';
    if (!/^[_A-Za-z][_0-9A-Za-z]{0,63}$/.test(name)) return 'other';
    if (this.seen.has(name)) return name;
    if (this.seen.size >= this.max) return 'other';
    this.seen.add(name);
    return name;
  }
}
