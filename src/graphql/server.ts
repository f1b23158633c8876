import { ApolloServer } from '@apollo/server';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../app-context';
import { createGraphqlContext, headerValue, type GraphqlContext } from './context';
import { formatGraphqlError } from './errors';
import { buildGraphqlSchema } from './schema';

/** Apollo Server on POST /graphql (GET too, for tools), over the same domain services as the REST shim. */
export async function registerGraphql(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const schema = await buildGraphqlSchema();
  const apollo = new ApolloServer<GraphqlContext>({
    schema,
    introspection: ctx.config.graphqlIntrospection,
    formatError: formatGraphqlError,
    includeStacktraceInErrorResponses: false,
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
  app.route({ url: '/graphql', method: ['GET', 'POST', 'OPTIONS'], handler });
}
