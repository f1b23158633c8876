import { ApolloServer } from '@apollo/server';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import websocket from '@fastify/websocket';
import { makeHandler } from 'graphql-ws/use/@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context';
import { GraphQLError } from 'graphql';
import { containsNul, DomainError, UNSTORABLE_TEXT } from '../shared/errors';
import { createGraphqlContext, headerValue, type GraphqlContext } from './context';
import { formatGraphqlError } from './errors';
import { depthAndSizeLimit } from './limits';
import { buildGraphqlSchema } from './schema';
import { noteFailedAuthentication } from '../protection';

export const MAX_QUERY_DEPTH = 12;
export const MAX_QUERY_FIELDS = 400;

/**
 * GraphQL on /graphql: Apollo Server for HTTP (POST, and GET for tools) and the graphql-ws
 * protocol over WebSocket on the same path, both over the domain services the REST shim uses.
 */
export async function registerGraphql(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const schema = await buildGraphqlSchema();
  const apollo = new ApolloServer<GraphqlContext>({
    schema,
    introspection: ctx.config.graphqlIntrospection,
    formatError: formatGraphqlError,
    includeStacktraceInErrorResponses: false,
    validationRules: [depthAndSizeLimit(MAX_QUERY_DEPTH, MAX_QUERY_FIELDS)],
    plugins: [
      {
        // NUL characters cannot be stored: refuse them before any resolver runs.
        async requestDidStart() {
          return {
            async didResolveOperation({ request }) {
              if (containsNul(request.variables) || (request.query ?? '').includes('\u0000') || /\\u0000/i.test(request.query ?? '')) {
                throw new GraphQLError(UNSTORABLE_TEXT, { extensions: { code: 'VAL400', http: { status: 200 } } });
              }
            },
          };
        },
      },
    ],
  });
  await apollo.start();
  // Fastify drains HTTP connections on close; Apollo stops with it (its drain plugin would call close again).
  app.addHook('onClose', async () => apollo.stop());

  const handler = fastifyApolloHandler(apollo, {
    context: async (request) =>
      createGraphqlContext(ctx, {
        apiKey: headerValue(request.headers['api-key']),
        adminToken: headerValue(request.headers['x-admin-token']),
      }),
  });

  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  const wsHandler = makeHandler({
    schema,
    // The api-key travels in connectionParams; a bad one closes the socket (4403) before any operation.
    onConnect: async ({ connectionParams, extra }) => {
      const apiKey = connectionParams?.['api-key'];
      try {
        await ctx.services.auth.authenticate(typeof apiKey === 'string' ? apiKey : undefined);
        return true;
      } catch (err) {
        if (err instanceof DomainError) {
          noteFailedAuthentication(extra.request); // rate limit of failed authentications per IP
          return false;
        }
        throw err;
      }
    },
    context: ({ connectionParams }) =>
      createGraphqlContext(ctx, { apiKey: typeof connectionParams?.['api-key'] === 'string' ? (connectionParams['api-key'] as string) : undefined }),
  });

  app.route({ url: '/graphql', method: ['POST', 'OPTIONS'], handler });
  app.route({ url: '/graphql', method: 'GET', handler, wsHandler });
}
