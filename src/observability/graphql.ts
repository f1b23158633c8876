import type { ApolloServerPlugin } from '@apollo/server';
import { getOperationAST, type DocumentNode } from 'graphql';
import { LabelGuard, type Metrics } from './metrics';

type Transport = 'http' | 'websocket';

/** Records one finished operation: its count by outcome, and (queries and mutations) its duration. */
function record(
  metrics: Metrics,
  names: LabelGuard,
  transport: Transport,
  type: string,
  name: string | null | undefined,
  startedAt: number,
  errored: boolean,
): void {
  const operation_name = names.label(name);
  metrics.graphqlOperations.inc({ transport, operation_type: type, operation_name, outcome: errored ? 'error' : 'ok' });
  // A subscription lasts as long as the client keeps it: its lifetime is no latency.
  if (type !== 'subscription') {
    metrics.graphqlDuration.observe({ transport, operation_type: type, operation_name }, (performance.now() - startedAt) / 1000);
  }
}

/**
 * GraphQL over HTTP (Apollo): each operation counted by type (query, mutation; `unknown`
 * when it did not parse), name and outcome, and timed.
 */
export function graphqlMetricsPlugin(metrics: Metrics, names: LabelGuard): ApolloServerPlugin {
  return {
    async requestDidStart({ request }) {
      const startedAt = performance.now();
      let type = 'unknown';
      let errored = false;
      return {
        async didResolveOperation({ operation }) {
          if (operation) type = operation.operation;
        },
        async didEncounterErrors() {
          errored = true;
        },
        async willSendResponse({ operationName, document }) {
          // A document that parsed but failed validation still says what it is and how it is named.
          const operation = document ? getOperationAST(document, request.operationName) : null;
          if (type === 'unknown' && operation) type = operation.operation;
          record(metrics, names, 'http', type, operationName ?? request.operationName ?? operation?.name?.value, startedAt, errored);
        },
      };
    },
  };
}

interface RunningOperation {
  type: string;
  name: string | null | undefined;
  startedAt: number;
  errored: boolean;
}

/**
 * GraphQL over WebSocket (graphql-ws): the same counts and timings, kept per socket from the
 * operation's start (onSubscribe) to its completion (onComplete, which graphql-ws also calls
 * when the socket closes under a running subscription).
 */
export class GraphqlWsMetrics {
  private readonly running = new WeakMap<object, Map<string, RunningOperation>>();

  constructor(
    private readonly metrics: Metrics,
    private readonly names: LabelGuard,
  ) {}

  started(socket: object, id: string, document: DocumentNode, operationName: string | null | undefined): void {
    const operation = getOperationAST(document, operationName);
    let operations = this.running.get(socket);
    if (!operations) this.running.set(socket, (operations = new Map()));
    // The document's own name when the client did not say which operation (a single one).
    operations.set(id, {
      type: operation?.operation ?? 'unknown',
      name: operationName ?? operation?.name?.value,
      startedAt: performance.now(),
      errored: false,
    });
  }

  /** An error for an operation: marks a running one, or counts one refused before it started (limits, validation). */
  errored(socket: object, id: string, operationName: string | null | undefined): void {
    const operation = this.running.get(socket)?.get(id);
    if (operation) operation.errored = true;
    else record(this.metrics, this.names, 'websocket', 'unknown', operationName, performance.now(), true);
  }

  completed(socket: object, id: string): void {
    const operations = this.running.get(socket);
    const operation = operations?.get(id);
    if (!operation) return;
    operations!.delete(id);
    record(this.metrics, this.names, 'websocket', operation.type, operation.name, operation.startedAt, operation.errored);
  }
}
