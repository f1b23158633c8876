import { GraphQLInt, GraphQLObjectType, GraphQLSchema, GraphQLString, parse, type ExecutionResult } from 'graphql';
import { OrderStatusBus, type OrderStatusChange } from '../../../src/events/order-status-bus';
import { sharedSubscribe } from '../../../src/graphql/shared-subscribe';

/** A subscription schema over the order status bus, counting how often the field resolves. */
function schemaOver(bus: OrderStatusBus): { schema: GraphQLSchema; resolved: () => number } {
  let resolved = 0;
  const change = new GraphQLObjectType({
    name: 'Change',
    fields: { reference: { type: GraphQLString }, sequence: { type: GraphQLInt } },
  });
  const schema = new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: { ok: { type: GraphQLInt, resolve: () => 1 } } }),
    subscription: new GraphQLObjectType({
      name: 'Subscription',
      fields: {
        changed: {
          type: change,
          args: { tag: { type: GraphQLString } },
          subscribe: () => bus.subscribe(1),
          resolve: (event: OrderStatusChange, args: { tag?: string }) => {
            resolved += 1;
            return { reference: `${event.reference}${args.tag ?? ''}`, sequence: event.sequence };
          },
        },
      },
    }),
  });
  return { schema, resolved: () => resolved };
}

const change = (sequence: number): OrderStatusChange => ({
  eventId: `e${sequence}`,
  environmentId: 1,
  reference: 'R-1',
  statusId: 5,
  status: 'Successful',
  sequence,
});

describe('sharedSubscribe', () => {
  it('executes a change once for every subscriber of the same operation, and again for another operation', async () => {
    const bus = new OrderStatusBus();
    const { schema, resolved } = schemaOver(bus);
    const subscribe = (query: string, variableValues?: Record<string, unknown>) =>
      sharedSubscribe({ schema, document: parse(query), variableValues, contextValue: {} }) as Promise<AsyncGenerator<ExecutionResult>>;
    const same = 'subscription S($tag: String) { changed(tag: $tag) { reference sequence } }';
    const streams = [
      ...(await Promise.all(Array.from({ length: 5 }, () => subscribe(same, { tag: '-a' })))),
      await subscribe(same, { tag: '-b' }),
      await subscribe('subscription { changed { reference } }'),
    ];
    const next = Promise.all(streams.map((s) => s.next()));
    bus.publish(change(1));
    const results = (await next).map((r) => r.value as ExecutionResult);
    expect(results.map((r) => r.data)).toEqual([
      ...Array(5).fill({ changed: { reference: 'R-1-a', sequence: 1 } }),
      { changed: { reference: 'R-1-b', sequence: 1 } },
      { changed: { reference: 'R-1' } },
    ]);
    // One execution for the five subscribers of one operation, one each for the two others.
    expect(resolved()).toBe(3);
    // A later change is executed again.
    const again = Promise.all(streams.map((s) => s.next()));
    bus.publish(change(2));
    const later = (await again).map((r) => r.value as ExecutionResult<{ changed: { reference: string; sequence?: number } }>);
    expect(later.map((r) => r.data?.changed.reference)).toEqual([...Array(5).fill('R-1-a'), 'R-1-b', 'R-1']);
    expect(later.slice(0, 6).map((r) => r.data?.changed.sequence)).toEqual(Array(6).fill(2));
    expect(resolved()).toBe(6);
    for (const s of streams) await s.return(undefined);
    expect(bus.subscriberCount(1)).toBe(0);
  });

  it('answers the errors of an operation that cannot subscribe, as graphql does', async () => {
    const { schema } = schemaOver(new OrderStatusBus());
    const result = (await sharedSubscribe({ schema, document: parse('subscription { nope }') })) as ExecutionResult;
    expect(result.errors?.[0]?.message).toMatch(/nope/);
  });
});
