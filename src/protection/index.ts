import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context';
import { installBodyDepthLimit } from './body-depth';
import { installBodyDrain } from './body-drain';
import { capConnections } from './connections';
import { createRateLimits } from './counter-stores';
import { installRateLimits } from './request-guard';
import { installRoutePolicy } from './request-target';
import { answerOtherUpgradesAsHttp } from './upgrade';
import { quietClientFrameErrors } from './websocket-errors';

export { httpServerOptions } from './connections';
export { clientErrors, frameworkErrors } from './framework-errors';
export { countPasswordResetRequest, countSocketOperation, failedAuthenticationsBlocked, noteFailedAuthentication } from './request-guard';
export { sendTooManyRequests, tooManyRequestsError } from './responses';

/** The path on which a WebSocket upgrade is honoured (GraphQL over graphql-ws). */
export const WEBSOCKET_PATH = '/graphql';

/**
 * Protection of the HTTP server as a whole: one spelling per route, rate limits on every route
 * decided on the route matched, connection caps, and
 * the upgrade and WebSocket handling that keeps client mistakes from reaching the service.
 * Call before any route is registered, so the rate-limit hook runs for all of them.
 */
export function installProtection(app: FastifyInstance, ctx: AppContext): void {
  // First: a request target in another spelling than an origin-form path is refused before it is counted or routed further.
  installRoutePolicy(app);
  const limits = ctx.config.rateLimit.enabled ? createRateLimits(app, ctx.config) : null;
  app.decorate('rateLimits', limits);
  if (limits) installRateLimits(app, ctx, limits);
  installBodyDepthLimit(app);
  // A body refused before it arrived (413): answer, then drain for a bounded time before closing.
  installBodyDrain(app);
  capConnections(app.server, ctx.config);
  // The WebSocket plugin adds its 'upgrade' listener while plugins load; both need it in place.
  app.addHook('onReady', async () => {
    answerOtherUpgradesAsHttp(app.server, WEBSOCKET_PATH);
    if (app.hasDecorator('websocketServer')) quietClientFrameErrors(app.websocketServer, app.log);
  });
}
