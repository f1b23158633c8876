import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../app-context';
import { LabelGuard, Metrics } from './metrics';
import { registerServiceGauges } from './gauges';
import { registerHealth } from './health';
import { GraphqlWsMetrics, graphqlMetricsPlugin } from './graphql';
import { logBusinessEvents } from './business-events';

export { Metrics } from './metrics';
export { LOG_REDACTIONS, loggerOptions, RequestLogController } from './logging';

declare module 'fastify' {
  interface FastifyInstance {
    /** The server's metrics (GET /metrics). */
    metrics: Metrics;
    /** Hooks of the GraphQL transports into the metrics. */
    graphqlMetrics: { apolloPlugin: import('@apollo/server').ApolloServerPlugin; websocket: GraphqlWsMetrics };
  }
}

/**
 * Health endpoints, `/metrics` and the hooks that feed it: HTTP requests by route pattern,
 * GraphQL operations (through `app.graphqlMetrics`, used by the GraphQL server), payment
 * outcomes and webhook attempts as the domain reports them, and gauges read when scraped.
 * Call before the routes are registered. The metric names are listed in docs/observability.md.
 */
export function installObservability(app: FastifyInstance, ctx: AppContext): Metrics {
  const metrics = new Metrics();
  const names = new LabelGuard();
  app.decorate('metrics', metrics);
  app.decorate('graphqlMetrics', { apolloPlugin: graphqlMetricsPlugin(metrics, names), websocket: new GraphqlWsMetrics(metrics, names) });

  app.addHook('onResponse', async (request, reply) => {
    // The route's pattern (`/api/v1/order/:reference`), never the raw URL: one series per route.
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
  });

  const { payments, webhooks, reads } = ctx.services;
  const stopReads = reads.onRead((notice) => {
    metrics.listReads.inc({ server: notice.server, reason: notice.reason });
    if (notice.error !== undefined)
      app.log.warn({ err: notice.error }, 'read replica unavailable: list reads go to the primary, the replica is tried again in a few seconds');
  });
  const stopPayments = payments.onOutcome((outcome) => {
    const method = outcome.method === 'C' ? 'card' : outcome.method === 'PAYPAL' ? 'paypal' : 'none';
    metrics.paymentOutcomes.inc({ method, status: outcome.status, code: outcome.code });
  });
  const stopConflicts = payments.onGuardConflict((step) => metrics.moneyPathConflicts.inc({ step }));
  const stopWebhooks = webhooks.onAttempt((attempt) => {
    metrics.webhookAttempts.inc({ result: attempt.result });
    if (attempt.result !== 'delivered') metrics.webhookFailures.inc({ reason: attempt.statusCode === null ? 'no_response' : 'status' });
    metrics.webhookAttemptDuration.observe(attempt.latencyMs / 1000);
    metrics.webhookLag.observe(attempt.lagMs / 1000);
  });
  const stopEventLog = logBusinessEvents(app.log, ctx.services);
  app.addHook('onClose', async () => {
    stopEventLog();
    stopReads();
    stopPayments();
    stopConflicts();
    stopWebhooks();
  });
  registerServiceGauges(metrics, ctx);

  registerHealth(app, ctx);
  const token = ctx.config.metricsToken;
  app.get('/metrics', async (request, reply) => {
    if (token !== undefined && !bearerMatches(request, token)) {
      return reply.code(401).header('www-authenticate', 'Bearer').send({ status: 'failed', statusCode: '401', message: 'A valid metrics token is required.' });
    }
    const text = await metrics.render();
    return reply.type(metrics.contentType).send(text);
  });
  return metrics;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** `Authorization: Bearer <token>`, compared in constant time. */
function bearerMatches(request: FastifyRequest, token: string): boolean {
  const header = request.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}
