import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { GraphqlContext } from '../context';
import { guardedField } from '../auth-checker';
import { CardDetailType, CustomerType, OrderType, type OrderRoot } from './order.types';

/**
 * The fields of an order that need the private key (the `read` permission), wherever an order
 * is answered: checked synchronously once the request's tenant is known (see `guardedField`),
 * so that a list page of orders resolves its rows without a promise each.
 */
@Resolver(() => OrderType)
export class OrderPrivateFieldsResolver {
  @FieldResolver(() => CustomerType, { description: 'Needs the private key.' })
  customer(@Root() order: OrderRoot, @Ctx() ctx: GraphqlContext): CustomerType | Promise<CustomerType> {
    return guardedField(ctx, 'read', () => order.customer);
  }

  @FieldResolver(() => [CardDetailType], { description: 'Needs the private key.' })
  cardDetails(@Root() order: OrderRoot, @Ctx() ctx: GraphqlContext): CardDetailType[] | Promise<CardDetailType[]> {
    return guardedField(ctx, 'read', () => order.cardDetails);
  }
}
