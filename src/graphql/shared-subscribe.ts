import { createSourceEventStream, execute, print, type DocumentNode, type ExecutionArgs, type ExecutionResult } from 'graphql';

type Result = ExecutionResult | Promise<ExecutionResult>;

/** The text of each document (one parse per subscription, so one print each). */
const documentTexts = new WeakMap<DocumentNode, string>();

/** Per source event (the bus hands the same change object to every subscriber of its topic): the result per operation. */
const resultsByEvent = new WeakMap<object, Map<string, Result>>();

function operationKey(args: ExecutionArgs): string {
  let text = documentTexts.get(args.document);
  if (text === undefined) {
    text = print(args.document);
    documentTexts.set(args.document, text);
  }
  return `${args.operationName ?? ''}\n${JSON.stringify(args.variableValues ?? null)}\n${text}`;
}

/**
 * GraphQL's `subscribe`, except that an event reaching many subscribers of the same operation
 * (same document, operation name and variables) is executed once, and every one of them is
 * sent that result. A topic's subscribers all belong to one merchant environment (the bus's
 * topics are environments, and every subscriber passed authentication and authorisation when
 * it subscribed), and the subscription's fields resolve from the event alone, so the result is
 * the same for each. Results are kept per event object, and go when it does.
 */
export async function sharedSubscribe(args: ExecutionArgs): Promise<AsyncGenerator<ExecutionResult, void, void> | ExecutionResult> {
  const stream = await createSourceEventStream(args);
  if (!(Symbol.asyncIterator in stream)) return stream;
  const key = operationKey(args);
  const run = (event: unknown): Result => {
    if (typeof event !== 'object' || event === null) return execute({ ...args, rootValue: event });
    let results = resultsByEvent.get(event);
    if (!results) resultsByEvent.set(event, (results = new Map()));
    let result = results.get(key);
    if (result === undefined) {
      result = execute({ ...args, rootValue: event });
      results.set(key, result);
    }
    return result;
  };
  return mapped(stream, run);
}

/** `source` with each value mapped; `return()` and `throw()` reach the source at once. */
function mapped(source: AsyncIterable<unknown>, map: (value: unknown) => Result): AsyncGenerator<ExecutionResult, void, void> {
  const iterator = source[Symbol.asyncIterator]();
  const done = { value: undefined, done: true } as const;
  const generator: AsyncGenerator<ExecutionResult, void, void> = {
    async next() {
      const step = await iterator.next();
      if (step.done) return done;
      return { value: await map(step.value), done: false };
    },
    async return() {
      await iterator.return?.();
      return done;
    },
    async throw(error?: unknown) {
      await iterator.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return generator;
    },
  };
  return generator;
}
