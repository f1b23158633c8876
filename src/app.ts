import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { AppContext } from './app-context';
import { registerGraphql } from './graphql/server';
import { registerRestShim } from './rest/routes';
import { registerAssets } from './checkout/assets';
import { registerCheckoutPages } from './checkout/pages';
import { registerSite } from './site/landing';
import { frameworkErrors, httpServerOptions, installProtection } from './protection';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Header and body paths that must never reach a log line. */
export const LOG_REDACTIONS = [
  'req.headers["api-key"]',
  'req.headers["x-admin-token"]',
  'req.headers.authorization',
  'req.headers.cookie',
];

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: { paths: LOG_REDACTIONS, censor: '[redacted]' },
    // Only method, url and ids: bodies (which may hold card data) are never logged.
    serializers: {
      req: (req: { method: string; url: string; id: string; ip?: string }) => ({ method: req.method, url: redactQuery(req.url), id: req.id, ip: req.ip }),
    },
  };
}

/** TRUST_PROXY as Fastify takes it: a hop count becomes "trust the nearest n hops". */
function trustProxyOption(value: boolean | number | string[]): boolean | string[] | ((address: string, hop: number) => boolean) {
  return typeof value === 'number' ? (_address, hop) => hop < value : value;
}

function redactQuery(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : `${url.slice(0, q)}?[redacted]`;
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
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // strictTypes off: bodies of the shim are described, not forced, to be objects (an absent body reads as {}).
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false, strictTypes: false } },
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
  installProtection(app, ctx);

  app.get('/health', async (_request, reply) => {
    try {
      await ctx.orm.em.getConnection().execute('select 1');
      return { status: 'ok' };
    } catch {
      return reply.code(503).send({ status: 'unavailable' });
    }
  });

  await registerRestShim(app, ctx);
  await registerGraphql(app, ctx);
  await registerAssets(app);
  await registerCheckoutPages(app, ctx);
  await registerSite(app, ctx);
  return app;
}
