import { GraphQLObjectType } from 'graphql';
import { getMetadataStorage } from 'type-graphql';
import { buildGraphqlSchema } from '../../../src/graphql/schema';

/**
 * Object types built with `simpleResolvers` (the order and payment-link lists' types): their plain
 * fields are read straight off the object, with no type-graphql resolver around each value; a
 * field that needs a check keeps its own field resolver. type-graphql ignores `@Authorized` and
 * middlewares on a plain field of such a type, so none may have them.
 */
describe('object types with simple resolvers', () => {
  const storage = getMetadataStorage();
  const simple = () => storage.objectTypes.filter((t) => t.simpleResolvers === true);

  it('are the types of the order and payment-link lists', async () => {
    await buildGraphqlSchema();
    expect(
      simple()
        .map((t) => t.name)
        .sort(),
    ).toEqual(
      [
        'CardDetail',
        'Customer',
        'Order',
        'OrderConnection',
        'OrderEdge',
        'OrderPayment',
        'PageInfo',
        'PaymentLink',
        'PaymentLinkConnection',
        'PaymentLinkEdge',
      ].sort(),
    );
  });

  it('have no field with roles or middlewares, whose check would be skipped', async () => {
    await buildGraphqlSchema();
    const targets = new Set(simple().map((t) => t.target));
    expect(storage.authorizedFields.filter((f) => targets.has(f.target)).map((f) => f.fieldName)).toEqual([]);
    expect(storage.middlewares.filter((m) => targets.has(m.target)).map((m) => m.fieldName)).toEqual([]);
  });

  it('keep the field resolvers that guard fields (the customer and cards of an order need the private key), and no resolver on plain fields', async () => {
    const schema = await buildGraphqlSchema();
    const order = schema.getType('Order') as GraphQLObjectType;
    expect(order.getFields().customer!.resolve).toEqual(expect.any(Function));
    expect(order.getFields().cardDetails!.resolve).toEqual(expect.any(Function));
    expect(order.getFields().orderReference!.resolve).toBeUndefined();
    // Every field resolver of these types is still the field's resolver.
    const resolved: string[] = [];
    for (const t of simple()) {
      const fields = (schema.getType(t.name) as GraphQLObjectType).getFields();
      for (const r of storage.fieldResolvers.filter((f) => f.getObjectType?.() === t.target)) {
        if (typeof fields[r.schemaName]!.resolve === 'function') resolved.push(`${t.name}.${r.schemaName}`);
        else resolved.push(`${t.name}.${r.schemaName} has no resolver`);
      }
    }
    expect(resolved).toEqual(expect.arrayContaining(['Order.customer', 'Order.cardDetails']));
    expect(resolved.filter((r) => r.endsWith('has no resolver'))).toEqual([]);
  });
});
