import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import type { AppContext } from './app-context';
import { registerGraphql } from './graphql/server';
import { registerRestShim } from './rest/routes';
import { registerAssets } from './checkout/assets';
import { registerCheckoutPages } from './checkout/pages';
import { registerDashboard } from './dashboard/routes';
import { registerSite } from './site/landing';
import { registerAdminApi } from './operations/admin-api';
import { clientErrors, frameworkErrors, httpServerOptions, installProtection } from './protection';
import { installObservability, loggerOptions, RequestLogController } from './observability';
import { sendFailure } from './protection/failure-shapes';

export { LOG_REDACTIONS, loggerOptions } from './observability';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** TRUST_PROXY as Fastify takes it: a hop count becomes "trust the nearest n hops". */
function trustProxyOption(value: boolean | number | string[]): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof value === 'number' ? (_address, hop) => hop < value : value;
}

export const SHUTTING_DOWN = 'The service is shutting down, please try again.';

function sendShuttingDown(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  reply.header('connection', 'close').header('retry-after', '1');
  return sendFailure(request, reply, {
    status: 503,
    code: '503',
    graphqlCode: 'SERVICE_UNAVAILABLE',
    message: SHUTTING_DOWN,
    extensions: { requestId: request.id },
  });
}

/** Builds the HTTP server: REST shim, GraphQL, hosted checkout pages, health. */
export async function buildApp(ctx: AppContext, options: { logger?: FastifyServerOptions['logger'] } = {}): Promise<FastifyInstance> {
  const app = Fastify({
    logger: options.logger ?? loggerOptions(ctx.config.logLevel),
    bodyLimit: ctx.config.bodyLimitBytes,
    trustProxy: trustProxyOption(ctx.config.trustProxy),
    // Slow clients: headers and body within REQUEST_TIMEOUT_MS, idle keep-alive closed after KEEP_ALIVE_TIMEOUT_MS.
    requestTimeout: ctx.config.requestTimeoutMs,
    keepAliveTimeout: ctx.config.keepAliveTimeoutMs,
    http: httpServerOptions(ctx.config),
    frameworkErrors,
    clientErrorHandler: clientErrors,
    // While closing, the hook below answers in the documented shape (Fastify's own 503 has another).
    return503OnClosing: false,
    requestIdHeader: false,
    // Request lines with the matched route, at debug for health checks and static files.
    logController: new RequestLogController(),
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // strictTypes off: bodies of the shim are described, not forced, to be objects (an absent body reads as {}).
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, strictTypes: false } },
  });

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // Shutting down: a request that arrives on a connection still open is refused, and the connection closed.
    if (closing) return sendShuttingDown(request, reply);
  });
  installProtection(app, ctx);
  // /health, /health/ready, /health/live, /metrics, and the hooks that count requests.
  installObservability(app, ctx);

  await registerRestShim(app, ctx);
  await registerGraphql(app, ctx);
  await registerAssets(app);
  await registerCheckoutPages(app, ctx);
  await registerDashboard(app, ctx);
  await registerSite(app, ctx);
  registerAdminApi(app, ctx);
  return app;
}
