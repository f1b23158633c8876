import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { fastifyApolloHandler } from '@as-integrations/fastify';
import websocket from '@fastify/websocket';
import { makeHandler, type Extra } from 'graphql-ws/use/@fastify/websocket';
import { CloseCode, type Context as WsContext } from 'graphql-ws';
import { sharedSubscribe } from './shared-subscribe';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { getOperationAST, GraphQLError, type FormattedExecutionResult, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import type { AppContext } from '../app-context';
import { DomainError, EnvironmentOutOfReachError, ExpiredKeyError } from '../shared/errors';
import { graphqlErrorBody } from '../protection/failure-shapes';
import { createGraphqlContext, headerValue, type GraphqlContext, type RequestLog } from './context';
import { formatGraphqlError, isInternalError, rootCause } from './errors';
import { ProcessorCallFailure } from '../payments/processor-time-limit';
import { documentTooLarge, MAX_DOCUMENT_TOKENS, OperationPipeline, unstorableTextError } from './pipeline';
import { KeySockets, TRY_AGAIN_LATER, UNCHECKED_KEY_REASON, type KeyStanding } from './key-sockets';
import { buildGraphqlSchema } from './schema';
import { compiledExecutionGateway } from './compiled-execution';
import { countSocketOperation, noteFailedAuthentication } from '../protection';
import { sameOrigin, sessionCredentialsOf } from '../merchants/dashboard-session-http';
import type { SessionCredentials } from '../merchants/dashboard-session.service';

/** The graphql-ws `extensions.code` of a subscribe beyond MAX_SUBSCRIPTIONS_PER_SOCKET. */
export const TOO_MANY_SUBSCRIPTIONS = 'TOO_MANY_SUBSCRIPTIONS';

/**
 * GraphQL on /graphql: Apollo Server for HTTP (POST, and GET for tools) and the graphql-ws
 * protocol over WebSocket on the same path, both over the domain services the REST shim uses.
 * Both transports share one pipeline: the same validation (GraphQL's rules, the query limits,
 * the introspection switch), the same NUL check, the same error formatting and logging.
 */
export async function registerGraphql(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const schema = await buildGraphqlSchema();
  const pipeline = new OperationPipeline(schema, { introspection: ctx.config.graphqlIntrospection });
  const httpHandler = await createHttpHandler(app, ctx, schema, pipeline);
  const wsHandler = await createWebSocketHandler(app, ctx, schema, pipeline);

  // The `graphql` family: errors, limits and refusals on this route answer as GraphQL errors.
  const config = { family: 'graphql' } as const;
  app.route({ url: '/graphql', method: ['POST', 'OPTIONS'], preValidation: refuseLargeDocuments, handler: httpHandler, config });
  app.route({ url: '/graphql', method: 'GET', preValidation: refuseLargeDocuments, handler: httpHandler, wsHandler, config });
}

/**
 * A document over MAX_DOCUMENT_BYTES (the `query` of a POST body or of a GET's query string)
 * is answered with QUERY_TOO_COMPLEX before Apollo parses it: parsing and validating a huge
 * document would hold the event loop for everyone.
 */
async function refuseLargeDocuments(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
  const source = request.method === 'GET' ? request.query : request.body;
  const query = source !== null && typeof source === 'object' && !Array.isArray(source) ? (source as { query?: unknown }).query : undefined;
  const refused = documentTooLarge(query);
  if (!refused) return undefined;
  return reply.code(400).type('application/json; charset=utf-8').send(graphqlErrorBody(refused.message, refused.extensions));
}

/** Logs each internal error (whose message the client never sees) with the request id. */
function logInternalErrors(log: RequestLog, errors: readonly unknown[], details: Record<string, unknown>): void {
  for (const error of errors) {
    const path = error instanceof GraphQLError ? error.path : undefined;
    const cause = rootCause(error);
    if (cause instanceof ProcessorCallFailure) log.warn({ err: cause, path, ...details }, cause.logLine);
    if (!isInternalError(error)) continue;
    log.error({ err: cause, path, ...details }, 'GraphQL operation failed with an internal error');
  }
}

/** Adds `extensions.requestId` to the masked internal errors of an answer (their only clue for support). */
function withRequestId(errors: readonly GraphQLFormattedError[] | undefined, requestId: string): void {
  if (!errors) return;
  for (const error of errors) {
    if (
      error.extensions?.code === 'INTERNAL_SERVER_ERROR' ||
      error.extensions?.code === 'SERVICE_UNAVAILABLE' ||
      error.extensions?.code === 'PROCESSOR_TIMEOUT' ||
      error.extensions?.code === 'PROCESSOR_UNAVAILABLE'
    )
      (error as { extensions: Record<string, unknown> }).extensions = { ...error.extensions, requestId };
  }
}

async function createHttpHandler(app: FastifyInstance, ctx: AppContext, schema: GraphQLSchema, pipeline: OperationPipeline) {
  const apollo = new ApolloServer<GraphqlContext>({
    // Apollo's pipeline (parse, validation, plugins, error formatting) with compiled execution of queries.
    gateway: compiledExecutionGateway(schema),
    // The introspection switch is one of the pipeline's validation rules (the same over WebSocket).
    introspection: true,
    formatError: formatGraphqlError,
    // A document with more tokens is refused while it is parsed (QUERY_TOO_COMPLEX, see formatGraphqlError).
    parseOptions: { maxTokens: MAX_DOCUMENT_TOKENS },
    includeStacktraceInErrorResponses: false,
    validationRules: [...pipeline.validationRules],
    plugins: [
      ...(app.hasDecorator('graphqlMetrics') ? [app.graphqlMetrics.apolloPlugin] : []),
      // No field sets cache hints: the default cache-control plugin only wrapped every field resolver.
      ApolloServerPluginCacheControlDisabled(),
      {
        async requestDidStart() {
          return {
            async didResolveOperation({ request }) {
              const unstorable = unstorableTextError(request.query, request.variables);
              if (unstorable) throw unstorable;
            },
            async didEncounterErrors({ errors, contextValue, operationName }) {
              logInternalErrors(contextValue.log, errors, { operationName });
            },
            async willSendResponse({ response, contextValue, operation }) {
              // Before the answer leaves: the caller's next request cannot overtake it.
              if (operation?.operation === 'mutation') await contextValue.wrote();
              // An internal error carries the request id (also in the x-request-id header), for support.
              if (contextValue?.requestId && response.body.kind === 'single') withRequestId(response.body.singleResult.errors, contextValue.requestId);
            },
          };
        },
      },
    ],
  });
  await apollo.start();
  // Fastify drains HTTP connections on close; Apollo stops with it (its drain plugin would call close again).
  app.addHook('onClose', async () => apollo.stop());

  return fastifyApolloHandler(apollo, {
    context: async (request) =>
      createGraphqlContext(
        ctx,
        {
          apiKey: headerValue(request.headers['api-key']),
          adminToken: headerValue(request.headers['x-admin-token']),
          session: sessionCredentialsOf(request.headers),
        },
        request,
      ),
  });
}

/** What this server keeps per socket, beside graphql-ws's own state. */
type SocketState = {
  apiKey?: string;
  /** A dashboard socket: the session cookie (Origin checked), the CSRF token and environment from connectionParams. */
  session?: SessionCredentials;
};

type SocketContext = WsContext<Record<string, unknown>, Extra & Partial<SocketState>>;

function apiKeyOf(connectionParams: Readonly<Record<string, unknown>> | undefined): string | undefined {
  const value = connectionParams?.['api-key'];
  return typeof value === 'string' ? value : undefined;
}

/**
 * The dashboard session of a socket opened without an api-key: the cookie sent with the
 * upgrade, accepted only from this service's own pages (Origin), with the CSRF token and the
 * environment in connectionParams. Undefined when the socket is no such thing.
 */
function sessionOf(
  ctx: AppContext,
  request: Extra['request'],
  connectionParams: Readonly<Record<string, unknown>> | undefined,
): SessionCredentials | undefined {
  const fromCookie = sessionCredentialsOf(request.headers);
  if (!fromCookie || !sameOrigin(request.headers, ctx.config.publicUrl)) return undefined;
  const csrf = connectionParams?.['csrf-token'];
  const environment = connectionParams?.environment;
  return {
    token: fromCookie.token,
    csrfToken: typeof csrf === 'string' ? csrf : undefined,
    environment: typeof environment === 'string' ? environment : undefined,
  };
}

/** What a tracked dashboard socket is checked with when keys are replaced: its session, as text. */
const SESSION_SOCKET = 'dashboard-session:';

/**
 * Sockets opened with an api-key close (4403) when a rotation makes that key stop working, and
 * sockets of a member's dashboard session when the member's role changes or they are removed,
 * on every instance: the merchants domain reports the change, the event fan-out carries it to
 * all instances, and each checks its own sockets of the environments concerned.
 */
function closeSocketsOfReplacedKeys(app: FastifyInstance, ctx: AppContext): KeySockets {
  const { auth, eventFanout } = ctx.services;
  const sockets = new KeySockets(
    (apiKey) =>
      (apiKey.startsWith(SESSION_SOCKET)
        ? ctx.services.dashboardSessions.authenticate(JSON.parse(apiKey.slice(SESSION_SOCKET.length)) as SessionCredentials)
        : auth.authenticate(apiKey)
      ).then(
        (tenant): KeyStanding => ({ expiresAt: tenant.keyExpiresAt ?? null }),
        (err) => {
          if (err instanceof DomainError) return false;
          throw err;
        },
      ),
    () => ctx.clock.now(),
    app.log,
  );
  const stopListening = eventFanout.onKeysExpiry((expiry) => sockets.keysExpire(expiry.environmentId, expiry.expiresAt));
  // A rotation announced while this instance did not listen went unheard: every socket is
  // checked again when the connection is back, before the events missed meanwhile go out.
  const stopRechecking = eventFanout.onReconnected(() => sockets.checkAll());
  app.addHook('onClose', async () => {
    stopListening();
    stopRechecking();
    sockets.stop();
  });
  return sockets;
}

async function createWebSocketHandler(app: FastifyInstance, ctx: AppContext, schema: GraphQLSchema, pipeline: OperationPipeline) {
  const { auth } = ctx.services;
  const maxOperations = ctx.config.maxSubscriptionsPerSocket;
  const sockets = closeSocketsOfReplacedKeys(app, ctx);

  const metrics = app.hasDecorator('graphqlMetrics') ? app.graphqlMetrics.websocket : undefined;
  const format = (socket: SocketContext, operationId: string, errors: readonly GraphQLError[]) => {
    logInternalErrors(socket.extra.request.log, errors, { operationId });
    const formatted = errors.map((e) => formatGraphqlError(e.toJSON(), e));
    withRequestId(formatted, socket.extra.request.id);
    return formatted;
  };

  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  return makeHandler<Record<string, unknown>, SocketState>({
    schema,
    // Never put an internal error's text in a close reason.
    isProd: true,
    // A change reaching many subscribers of one operation is executed once for all of them.
    subscribe: sharedSubscribe,
    // The api-key travels in connectionParams; a bad one closes the socket (4403) before any operation.
    onConnect: async (socket) => {
      const apiKey = apiKeyOf(socket.connectionParams);
      const session = apiKey === undefined ? sessionOf(ctx, socket.extra.request, socket.connectionParams) : undefined;
      let environmentId: number;
      let expiresAt: number | null;
      try {
        const tenant = session ? await ctx.services.dashboardSessions.authenticate(session) : await auth.authenticate(apiKey);
        environmentId = tenant.environmentId;
        expiresAt = tenant.keyExpiresAt ?? null;
      } catch (err) {
        // A valid session asking for an environment its member does not work in: told why, not counted as a failed authentication.
        if (err instanceof EnvironmentOutOfReachError) {
          socket.extra.socket.close(CloseCode.Forbidden, err.closeReason);
          return false;
        }
        if (err instanceof DomainError) {
          await noteFailedAuthentication(socket.extra.request); // rate limit of failed authentications per IP
          // graphql-ws would close with 4403 "Forbidden"; an expired key is told why (the same code).
          if (err instanceof ExpiredKeyError) socket.extra.socket.close(CloseCode.Forbidden, err.expiredMessage);
          return false;
        }
        // The database failed, not the key: 1013 "Try Again Later", after which graphql-ws clients
        // reconnect (an error thrown here would close with 4500, which ends their retries for good).
        socket.extra.request.log.error({ err }, 'authenticating a GraphQL WebSocket failed; the client is told to try again later');
        socket.extra.socket.close(TRY_AGAIN_LATER, UNCHECKED_KEY_REASON);
        return false;
      }
      const ws = socket.extra.socket;
      if (apiKey !== undefined && ws.readyState === ws.OPEN) {
        socket.extra.apiKey = apiKey;
        ws.once(
          'close',
          sockets.add(environmentId, apiKey, (code, reason) => ws.close(code, reason), expiresAt),
        );
      } else if (session && ws.readyState === ws.OPEN) {
        socket.extra.session = session;
        ws.once(
          'close',
          sockets.add(environmentId, SESSION_SOCKET + JSON.stringify(session), (code, reason) => ws.close(code, reason), expiresAt),
        );
      }
      return true;
    },
    // Everything HTTP does before execution, in the same order; the operation runs only if this returns its arguments.
    onSubscribe: async (socket, id, payload) => {
      // graphql-ws has already registered this operation: more than the limit means one too many.
      if (Object.keys(socket.subscriptions).length > maxOperations) {
        return [
          new GraphQLError(`This connection already holds ${maxOperations} operations; complete one before starting another.`, {
            extensions: { code: TOO_MANY_SUBSCRIPTIONS },
          }),
        ];
      }
      const retryAfterSeconds = await countSocketOperation(socket.extra.request, socket.extra.apiKey);
      if (retryAfterSeconds !== undefined) {
        return [new GraphQLError('Too many requests, please try again later', { extensions: { code: 'RATE_LIMITED', retryAfterSeconds } })];
      }
      const prepared = pipeline.prepare(payload.query, payload.variables);
      if (Array.isArray(prepared)) return prepared;
      metrics?.started(socket, id, prepared.document, payload.operationName);
      return {
        schema,
        document: prepared.document,
        operationName: payload.operationName,
        variableValues: payload.variables,
        contextValue: createGraphqlContext(ctx, { apiKey: socket.extra.apiKey, session: socket.extra.session }, socket.extra.request),
      };
    },
    onNext: (socket, id, payload, args, result) => {
      let answer: FormattedExecutionResult | undefined;
      if (result.errors) {
        metrics?.errored(socket, id, payload.operationName);
        answer = { ...result, errors: format(socket, id, result.errors) };
      }
      // A mutation's caller is recorded as a writer before its answer leaves; a subscription's events wait for nothing.
      if (getOperationAST(args.document, args.operationName)?.operation === 'mutation') return (args.contextValue as GraphqlContext).wrote().then(() => answer);
      return answer;
    },
    onError: (socket, id, payload, errors) => {
      metrics?.errored(socket, id, payload.operationName);
      return format(socket, id, errors);
    },
    onComplete: (socket, id) => metrics?.completed(socket, id),
  });
}
