import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { AppContext } from '../app-context';
import { authenticateRequest } from './authentication';
import { installRestErrorHandling } from './errors';
import { registerBankRoutes } from './bank.routes';
import { registerLinkRoutes } from './link.routes';
import { registerOrderRoutes } from './order.routes';

/** The legacy REST compatibility shim under /checkout: authentication, error shape, routes, OpenAPI. */
export async function registerRestShim(app: FastifyInstance, ctx: AppContext): Promise<void> {
  installRestErrorHandling(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Checkout and payment-link service: REST compatibility interface',
        version: '1.0.0',
        description: 'Every endpoint needs the `api-key` header. Errors: `{ status: "failed", statusCode|status_code, message }`.',
      },
      servers: [{ url: ctx.config.publicUrl }],
    },
    hideUntagged: true,
  });
  app.get('/docs/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  // Legacy clients may send an empty body with Content-Type: application/json.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      const err = new Error('invalid JSON') as Error & { code: string; statusCode: number };
      err.code = 'FST_ERR_CTP_INVALID_JSON_BODY';
      err.statusCode = 400;
      done(err, undefined);
    }
  });

  await app.register(
    async (shim) => {
      shim.addHook('onRequest', authenticateRequest(ctx.services));
      await registerLinkRoutes(shim, ctx);
      await registerOrderRoutes(shim, ctx);
      await registerBankRoutes(shim, ctx);
    },
    { prefix: '/checkout' },
  );
}
