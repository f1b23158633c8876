import type { FastifyInstance, FastifySchemaCompiler, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TSchema } from '@sinclair/typebox';
import type { AppContext } from '../app-context';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { validationError } from '../shared/errors';
import { authenticateRequest, rememberWriters } from './authentication';
import { installRestErrorHandling } from './errors';
import { registerBankRoutes } from './bank.routes';
import { registerLinkRoutes } from './link.routes';
import { registerOrderRoutes } from './order.routes';
import { PLAINTEXTS } from './schemas';
import { DOCS_BRANDING } from './docs-branding';
import { packageInfo, SERVICE_NAME } from '../shared/package-info';

/**
 * Validation in the shim: params, query strings and headers are checked by Fastify against the
 * route's TypeBox schema; bodies are read in the handler with the same schema (`readInput`), so
 * that a refused body is answered inside the Idempotency-Key machinery like every other
 * documented failure, and decrypted plaintexts go through the very same reader.
 */
const shimValidator: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  if (httpPart === 'body') return () => true;
  const check = TypeCompiler.Compile(schema);
  // Checked, never replaced: headers especially must stay whole for the hooks that follow.
  return (value) => {
    if (check.Check(value)) return true;
    const first = check.Errors(value).First();
    return { error: validationError(`The ${first?.path.replace(/^\//, '') || httpPart} ${httpPart === 'headers' ? 'header' : 'parameter'} is not valid.`) };
  };
};

/** Everything from this origin only (http deployments included: no upgrade-insecure-requests). */
const SWAGGER_UI_CSP =
  "default-src 'self'; base-uri 'self'; img-src 'self' data:; font-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; object-src 'none'; frame-ancestors 'self'";

/** The legacy REST compatibility shim under /checkout: authentication, error shape, routes, OpenAPI. */
export async function registerRestShim(app: FastifyInstance, ctx: AppContext): Promise<void> {
  installRestErrorHandling(app);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: `${SERVICE_NAME}: REST compatibility interface`,
        version: packageInfo().version,
        description: [
          'Every endpoint needs the `api-key` header (public or private key; `order/verify` and the recurring-payment cancel need the private key).',
          'Errors are `{ status: "failed", statusCode | status_code, message }` (`status_code` for codes 13 and 100).',
          'Property names in bodies and decrypted plaintexts are matched case-insensitively; `null` counts as absent; unknown properties are ignored.',
          "Encrypted endpoints take `{ data }`; the plaintext each expects is under components.schemas (named by the body's `x-plaintext`).",
          'Every `/checkout/<path>` is also served as `/payment/<path>` (the same endpoint: same limits, same Idempotency-Key scope).',
        ].join('\n\n'),
      },
      servers: [{ url: ctx.config.publicUrl }],
      components: {
        securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'api-key', description: 'PGW-PUBLICKEY-… or PGW-SECRETKEY-…' } },
        schemas: PLAINTEXTS as unknown as Record<string, object>,
      },
      security: [{ apiKey: [] }],
    },
    hideUntagged: true,
  });
  const document = async () => app.swagger();
  app.get('/openapi.json', { schema: { hide: true } }, document);
  app.get('/docs/openapi.json', { schema: { hide: true } }, document);
  // Swagger UI's assets come from the npm package, served here: no CDN, and no call to the public validator.
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    staticCSP: SWAGGER_UI_CSP,
    uiConfig: { validatorUrl: null, persistAuthorization: false },
    ...DOCS_BRANDING,
  });

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

  const shim = async (scope: FastifyInstance, register: (scope: FastifyInstance) => Promise<void>) => {
    scope.setValidatorCompiler(shimValidator);
    // Response schemas document what the presenters build (and a test holds them to it); the body is serialised as built.
    scope.setSerializerCompiler(() => (data) => JSON.stringify(data));
    scope.addHook('onRequest', authenticateRequest(ctx.services));
    // Only where a write moves the caller's reads (a read replica): otherwise no hook runs per request.
    if (ctx.services.reads.tracksWriters) scope.addHook('onSend', rememberWriters(ctx.services));
    await register(scope);
  };
  for (const { prefix, aliasOf } of BASE_PATHS) {
    await app.register(
      (scope) => {
        if (aliasOf !== undefined) scope.addHook('onRoute', asAliasOf(prefix, aliasOf));
        return shim(scope, async (s) => {
          for (const register of CHECKOUT_ROUTES) await register(s, ctx);
        });
      },
      { prefix },
    );
  }
}

/** The legacy endpoints, one table: every one is served under each base path. */
const CHECKOUT_ROUTES: ((app: FastifyInstance, ctx: AppContext) => Promise<void>)[] = [registerLinkRoutes, registerOrderRoutes, registerBankRoutes];

/**
 * `/checkout` is the documented base path; `/payment`, which some legacy clients use, is an
 * alias of it for every endpoint: the same handlers, hidden from the OpenAPI document, and
 * counted as the `/checkout` route for limits and Idempotency-Key scope.
 */
const BASE_PATHS: { prefix: string; aliasOf?: string }[] = [{ prefix: '/checkout' }, { prefix: '/payment', aliasOf: '/checkout' }];

/** Marks each route of an alias scope: hidden from the document, its canonical route named in its config. */
function asAliasOf(prefix: string, canonicalPrefix: string) {
  return (route: RouteOptions): void => {
    route.schema = { ...route.schema, hide: true };
    route.config = { ...route.config, canonicalUrl: canonicalPrefix + route.url.slice(prefix.length) };
  };
}
